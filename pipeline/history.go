package pipeline

import (
	"context"
	"fmt"
	"slices"

	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/scan"
	"github.com/sessionfix/sessionfix/store"
)

// StoredNames returns the distinct tool names stored in the session stores under roots,
// sorted (a read-only scan: discovery, then every store's sites that are not absent
// placeholders), and the problems met: each discovery error, each store that could not be
// scanned. A failure of discovery or of the scan as a whole is one problem ("read session
// history: …") and no names. Used to infer an inventory when none is given (audit).
func StoredNames(ctx context.Context, roots []string) ([]string, []error) {
	var problems []error
	found, err := scan.Discover(ctx, roots)
	if err != nil {
		return nil, []error{fmt.Errorf("read session history: %w", err)}
	}
	for _, is := range found.Issues {
		if is.Severity == store.SevError {
			problems = append(problems, fmt.Errorf("%s: %s", is.Path, is.Reason))
		}
	}
	stores := make([]store.Store, len(found.Targets))
	for i, t := range found.Targets {
		stores[i] = t.Store
	}
	set := map[string]bool{}
	var names []string
	if _, err := rewrite.Process(ctx, stores, naming.Policy{}, rewrite.ProcessOptions{}, func(res *rewrite.StoreResult) error {
		if res.ScanErr != nil {
			problems = append(problems, res.ScanErr)
			return nil
		}
		for _, s := range res.Plan.Snap.Sites {
			if !s.Absent() && !set[s.Name] {
				set[s.Name] = true
				names = append(names, s.Name)
			}
		}
		return nil
	}); err != nil {
		return nil, append(problems, fmt.Errorf("read session history: %w", err))
	}
	slices.Sort(names)
	return names, problems
}
