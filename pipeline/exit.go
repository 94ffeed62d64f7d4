package pipeline

import (
	"strings"

	"github.com/sessionfix/sessionfix/internal/exitcode"
)

// ExitCode is the exit status of a scan or fix run summarized by s: a store in use,
// exitcode.InUse (4), wins over one that could not be read (or, applied, failed to be written),
// exitcode.Partial (3), which wins over a --fail-on kept finding (failOnKept and a kept name a
// provider rejects), exitcode.Finding (5); else 0. applied: the run was fix --apply (ApplyErrs
// count).
func (s *Summary) ExitCode(applied, failOnKept bool) int {
	switch {
	case s.InUse > 0:
		return exitcode.InUse
	case s.Failed || (applied && s.ApplyErrs > 0):
		return exitcode.Partial
	case failOnKept && s.Report.Totals.KeptRejected > 0:
		return exitcode.Finding
	}
	return 0
}

// FailOnKept reads --fail-on of scan and fix: true when it names "kept", the only finding
// (comma-separated, spaces and empty items allowed); another value is a *UsageError.
func FailOnKept(val string) (bool, error) {
	kept := false
	if val != "" {
		for _, f := range strings.Split(val, ",") {
			switch strings.TrimSpace(f) {
			case "kept":
				kept = true
			case "":
			default:
				return false, usagef("--fail-on takes kept, not %q", f)
			}
		}
	}
	return kept, nil
}
