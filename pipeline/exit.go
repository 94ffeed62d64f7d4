package pipeline

// Exit statuses of a run's outcome (cmd/sessionfix exits with them; its help lists them).
const (
	// ExitPartial: a store or an input could not be read, or --apply failed to rewrite one.
	ExitPartial = 3
	// ExitInUse: a store is in use by another process (changed while read, locked, or
	// appended to while rewritten).
	ExitInUse = 4
)

// ExitCode is the exit status of a scan or fix run summarized by s: a store in use,
// ExitInUse (4), wins over one that could not be read (or, applied, failed to be written),
// ExitPartial (3), which wins over a --fail-on kept finding (failOnKept and a kept name a
// provider rejects), ExitFinding (5); else 0. applied: the run was fix --apply (ApplyErrs
// count).
func (s *Summary) ExitCode(applied, failOnKept bool) int {
	switch {
	case s.InUse > 0:
		return ExitInUse
	case s.Failed || (applied && s.ApplyErrs > 0):
		return ExitPartial
	case failOnKept && s.Report.Totals.KeptRejected > 0:
		return ExitFinding
	}
	return 0
}
