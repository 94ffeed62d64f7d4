package pipeline

import (
	"fmt"
	"slices"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/runlog"
)

// RecordedRenames reads what the fix runs of stateDir recorded (issue 23 item 2: an audit made
// after a repair must read the raw identities in the names as they were): every rename
// (runlog.Rename, old → new) of a store the run rewrote and no undo restored, of every run
// not undone, as agent.Renames. A run that cannot be read is an error of the list (the others
// still count); no state directory, or no run, is no rename (Renames.Runs 0).
func RecordedRenames(stateDir string) (*agent.Renames, []error) {
	out := &agent.Renames{StateDir: stateDir, Old: map[string][]string{}}
	runs, err := runlog.ListRuns(stateDir)
	if err != nil {
		return out, []error{err}
	}
	var errs []error
	for _, ri := range runs {
		if ri.ReadErr != "" {
			errs = append(errs, fmt.Errorf("run %s of %s: %s: its renames are not known to the audit", ri.ID, stateDir, ri.ReadErr))
			continue
		}
		if ri.State == runlog.StateUndone {
			continue
		}
		m, err := runlog.ReadRun(ri.Dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("run %s of %s: %w: its renames are not known to the audit", ri.ID, stateDir, err))
			continue
		}
		counted := false
		for _, f := range m.Files {
			if f.Restored {
				continue
			}
			for _, r := range f.Renames {
				if r.Old == r.New || slices.Contains(out.Old[r.New], r.Old) {
					continue
				}
				out.Old[r.New] = append(out.Old[r.New], r.Old)
				counted = true
			}
		}
		if counted {
			out.Runs++
		}
	}
	return out, errs
}
