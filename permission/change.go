package permission

// Change is how a (rule, tool) pair moved across the rename (audit.md §2).
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
