package gemini

import (
	"cmp"
	"slices"
)

// ChangeKind says how a tool's outcome moved from one release to another.
type ChangeKind string

// The kinds of change, in report order.
const (
	// Lost: the tool is less restricted now (a deny that no longer denies, a hidden tool now
	// declared, an allow that stopped allowing is Gained instead).
	Lost ChangeKind = "lost"
	// Gained: the tool is more restricted now (an allow that stopped allowing, a bare exclude
	// that now hits another server's tool).
	Gained ChangeKind = "gained"
	// Changed: the same strength, another deciding rule (say hidden by another entry).
	Changed ChangeKind = "changed"
	// Same: the same outcome by the same rule.
	Same ChangeKind = "same"
)

// Change is one tool's outcome before and now.
type Change struct {
	Tool   Tool       `json:"tool"`
	Kind   ChangeKind `json:"kind"`
	Before Verdict    `json:"before"`
	Now    Verdict    `json:"now"`
}

func kindRank(k ChangeKind) int {
	switch k {
	case Lost:
		return 0
	case Gained:
		return 1
	case Changed:
		return 2
	}
	return 3
}

// Compare pairs the verdicts of two evaluations of the same tools (before: the release the
// rules were written for; now: the release that runs them) and sorts them lost first (the
// largest loss of restriction first), then gained, changed and same; each group by server and
// tool. A tool one side does not know is compared with "ran" (nothing restricts it).
func Compare(before, now *Result) []Change {
	var out []Change
	seen := map[Tool]bool{}
	for _, nv := range now.Tools {
		seen[nv.Tool] = true
		bv := before.Verdict(nv.Tool)
		b := Verdict{Tool: nv.Tool, Outcome: Ran, Why: "not a tool of that evaluation"}
		if bv != nil {
			b = *bv
		}
		out = append(out, change(b, nv))
	}
	for _, bv := range before.Tools {
		if !seen[bv.Tool] {
			out = append(out, change(bv, Verdict{Tool: bv.Tool, Outcome: Ran, Why: "not a tool of that evaluation"}))
		}
	}
	slices.SortStableFunc(out, func(a, b Change) int {
		if c := cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)); c != 0 {
			return c
		}
		da := a.Before.Outcome.Strength() - a.Now.Outcome.Strength()
		db := b.Before.Outcome.Strength() - b.Now.Outcome.Strength()
		if a.Kind == Lost && da != db {
			return cmp.Compare(db, da)
		}
		return cmp.Or(cmp.Compare(a.Tool.Server, b.Tool.Server), cmp.Compare(a.Tool.Name, b.Tool.Name))
	})
	return out
}

func change(b, n Verdict) Change {
	c := Change{Tool: n.Tool, Before: b, Now: n, Kind: Same}
	switch bs, ns := b.Outcome.Strength(), n.Outcome.Strength(); {
	case ns < bs:
		c.Kind = Lost
	case ns > bs:
		c.Kind = Gained
	case b.Outcome != n.Outcome || refID(b.By) != refID(n.By):
		c.Kind = Changed
	}
	return c
}

func refID(r *RuleRef) string {
	if r == nil {
		return ""
	}
	return r.ID
}

// Count returns how many changes are of kind k (audit --fail-on lost counts Lost).
func Count(changes []Change, k ChangeKind) int {
	n := 0
	for _, c := range changes {
		if c.Kind == k {
			n++
		}
	}
	return n
}
