package naming

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

// NormalizeMcp is the normalizeMcp rule (spec naming.md "Classes of a stored name"; the default
// agent's 0.24.4 release): each stored name is classified with mcpname.Classify (its exact UTF-16
// units with mcpname.ClassifyUnits) and the classes of naming.md decide what is rewritten (legacy
// dotted; legacy truncated dotted unless Policy.KeepTruncated; lossy legacy with
// Policy.RewriteLossy) and what is kept. The index of known raw identities is completed with the
// store's own legacy-dotted names (a restored dotted name counts as a raw identity), so a name
// normalized from one of them in the same store classifies as "normalized". Every agent whose
// release follows that rule sets its Agent.Namer to NormalizeMcp{}: rooms never import each other,
// so a rule two agents share lives here. Pure.
type NormalizeMcp struct{}

// Decide returns one decision per site of snap, in site order (a site its store cannot
// rewrite is guarded by ReadOnlyGuard).
func (n NormalizeMcp) Decide(snap *store.Snapshot, pol Policy) []Decision {
	return n.AppendDecisions(make([]Decision, 0, len(snap.Sites)), snap, pol)
}

// AppendDecisions is Decide appending to out (Appender).
func (NormalizeMcp) AppendDecisions(out []Decision, snap *store.Snapshot, pol Policy) []Decision {
	pol.Index = normalizeIndex(pol.Index, snap)
	out = slices.Grow(out, len(snap.Sites))
	// A store repeats the same few names: classify each distinct name once (the result, New
	// included, is shared by its sites), found by the name's string (memo) before its bytes.
	cache := map[string]Decision{}
	var memo [memoSlots]struct {
		name string
		d    Decision
	}
	for i := range snap.Sites {
		site := &snap.Sites[i]
		if site.Units == nil {
			m := &memo[memoSlot(site.Name)]
			if sameString(m.name, site.Name) {
				// (written in place: a Decision is 96 bytes, copied three times otherwise)
				out = append(out, m.d)
				d := &out[len(out)-1]
				d.Site = site
				guardReadOnly(d)
				continue
			}
			if d, ok := cache[site.Name]; ok {
				m.name, m.d = site.Name, d
				d.Site = site
				out = append(out, ReadOnlyGuard(d))
				continue
			}
		}
		var c mcpname.Classification
		if site.Units != nil {
			c = mcpname.ClassifyUnits(site.Units, pol.Index)
		} else {
			c = mcpname.Classify(site.Name, pol.Index)
		}
		d := normalizeDecision(site, c, pol)
		if site.Units == nil {
			cache[site.Name] = d
			m := &memo[memoSlot(site.Name)]
			m.name, m.d = site.Name, d
		}
		out = append(out, ReadOnlyGuard(d))
	}
	return out
}

// normalizeIndex returns ix plus the store's legacy-dotted names as raw identities (ix itself is
// not modified; nil when there is nothing to know).
func normalizeIndex(ix *mcpname.Index, snap *store.Snapshot) *mcpname.Index {
	var dotted []string
	seen := map[string]bool{} // each distinct name is looked at once (a store repeats a few)
	var memo [memoSlots]string
	for i := range snap.Sites {
		site := &snap.Sites[i]
		if site.Units != nil {
			continue
		}
		m := &memo[memoSlot(site.Name)]
		if sameString(*m, site.Name) || seen[site.Name] {
			*m = site.Name
			continue
		}
		*m = site.Name
		seen[site.Name] = true
		if mcpname.HasPrefix(site.Name) && !mcpname.IsProviderSafe(site.Name) && !mcpname.IsTruncationShape(site.Name) {
			dotted = append(dotted, site.Name)
		}
	}
	if len(dotted) == 0 {
		return ix
	}
	if ix == nil {
		return mcpname.NewIndex(dotted...)
	}
	return ix.Extend(dotted...)
}

// normalizeDecision applies the classes of naming.md to one classified name.
func normalizeDecision(site *store.Site, c mcpname.Classification, pol Policy) Decision {
	d := Decision{Site: site, Class: c.Class, Action: ActNone}
	switch c.Class {
	case mcpname.ClassLegacyDotted:
		d.Action, d.New, d.Source = ActRewrite, c.Registered, "normalizeMcp"
	case mcpname.ClassLegacyTruncatedDotted:
		if pol.KeepTruncated {
			d.Action, d.Note = ActKeep, "middle-truncated legacy name kept (--keep-truncated)"
		} else {
			d.Action, d.New, d.Source = ActRewrite, c.Registered, "normalizeMcp"
			d.Note = "middle-truncated: no current tool answers to the new name"
		}
		if c.Owner != "" {
			d.Note += fmt.Sprintf("; legacy spelling of %s (registered %s)", c.Owner, c.OwnerRegistered)
		}
	case mcpname.ClassLegacyTruncated:
		d.Action, d.Note = ActKeep, "middle-truncated legacy name kept as it is (possibly truncated; its middle cannot be rebuilt)"
		if c.Owner == "" && mcpname.HasHashSuffix(site.Name) {
			// normalize keeps the "___" at 28 of a truncated dotted name and appends a
			// hash: this is most likely such a name already rewritten.
			d.Action, d.Note = ActNone, "truncation shape with a hash suffix: most likely a middle-truncated dotted name already normalized"
		}
		if c.Owner != "" {
			d.Note += fmt.Sprintf("; legacy spelling of %s (registered %s)", c.Owner, c.OwnerRegistered)
		}
	case mcpname.ClassLossyLegacy:
		if pol.RewriteLossy {
			d.Action, d.New, d.Source = ActRewrite, c.OwnerRegistered, "inventory: "+c.Owner
		} else {
			d.Action = ActKeep
			d.Note = fmt.Sprintf("lossy legacy spelling of %s (registered %s); rewrite with --rewrite-lossy", c.Owner, c.OwnerRegistered)
		}
	}
	return d
}

// memoSlots is the size of the memos that find a name seen before by its string header, ahead
// of a map lookup that hashes and compares its bytes: a store's scan gives the sites of one
// distinct name one shared string (engine/jsonl interns them), so on a dense session (1.17
// million sites, a few dozen names per batch) nearly every site is found without hashing.
const memoSlots = 64

// memoSlot is the memo slot of s: from the address of its bytes (equal strings made apart fall
// in different slots and are found in the map instead).
func memoSlot(s string) int {
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return int((p>>3)^(p>>9)) & (memoSlots - 1)
}

// sameString reports whether a and b are one non-empty string: the same length and the same
// bytes in memory (then equal). false says nothing: equal strings made apart, or "" (an
// empty memo slot holds "", so an empty name is always looked up in the map).
func sameString(a, b string) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.StringData(a) == unsafe.StringData(b)
}
