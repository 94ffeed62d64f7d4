package pipeline

import (
	"testing"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/pipeline/report"
	"github.com/sessionfix/sessionfix/rewrite"
)

// TestExitCode: 4 wins over 3, 3 over 5; ApplyErrs count only for an applied run; a kept
// rejected name is a finding only with --fail-on kept.
func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		name            string
		s               Summary
		applied, failOn bool
		want            int
	}{
		{"clean", Summary{}, true, true, 0},
		{"in use wins", Summary{InUse: 1, Failed: true, ApplyErrs: 2}, true, true, exitcode.InUse},
		{"failed", Summary{Failed: true}, false, false, exitcode.Partial},
		{"apply error applied", Summary{ApplyErrs: 1}, true, false, exitcode.Partial},
		{"apply error not applied", Summary{ApplyErrs: 1}, false, false, 0},
		{"kept, no fail-on", Summary{Report: report.ScanReport{Totals: rewrite.Totals{KeptRejected: 2}}}, false, false, 0},
		{"kept, fail-on", Summary{Report: report.ScanReport{Totals: rewrite.Totals{KeptRejected: 2}}}, false, true, exitcode.Finding},
		{"partial wins over finding", Summary{Failed: true, Report: report.ScanReport{Totals: rewrite.Totals{KeptRejected: 2}}}, false, true, exitcode.Partial},
	} {
		if got := c.s.ExitCode(c.applied, c.failOn); got != c.want {
			t.Errorf("%s: ExitCode(%v, %v) = %d, want %d", c.name, c.applied, c.failOn, got, c.want)
		}
	}
}
