package permission

// Change is how a (rule, tool) pair moved across the rename (audit.md §2): the Qwen Code
// audit's and every agent room's audit plug-in's pairs use it.
type Change string

// Changes.
const (
	ChangeSame   Change = "same"
	ChangeGained Change = "gained" // before no, now match
	ChangeLost   Change = "lost"   // before match, now no or refused
)

// ChangeOf returns the change from before to now: gained when only now is a match, lost
// when only before is (a refused grant counts as not matching), else same.
func ChangeOf(now, before Match) Change {
	n, b := now == Matched, before == Matched
	switch {
	case n && !b:
		return ChangeGained
	case b && !n:
		return ChangeLost
	}
	return ChangeSame
}

// RefusedNow reports whether an audit pair's "now" word (its JSON "now" member) counts as a
// refused grant in a baseline: Refused (Qwen Code's ambiguity guard refuses the grant) or
// ClaudeIgnored (the release names the tool but does not apply the rule), the two words the
// SARIF "refused" results are made of.
func RefusedNow(now string) bool {
	return now == string(Refused) || now == string(ClaudeIgnored)
}
