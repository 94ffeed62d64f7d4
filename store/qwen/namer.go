package qwen

import (
	"fmt"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// namer is Qwen Code 0.24.4's rule: normalizeMcp of each stored name, with the classes of
// naming.md deciding what is kept. The index of known raw identities is completed with the
// store's own legacy-dotted names (Qwen Code treats a restored dotted name as a raw identity),
// so a name normalized from one of them in the same store classifies as "normalized".
type namer struct{}

func (namer) Decide(snap *store.Snapshot, pol naming.Policy) []naming.Decision {
	pol.Index = enrichIndex(pol.Index, snap)
	out := make([]naming.Decision, 0, len(snap.Sites))
	// A store repeats the same few names: classify each distinct name once (the result, New
	// included, is shared by its sites).
	cache := map[string]naming.Decision{}
	for i := range snap.Sites {
		site := &snap.Sites[i]
		if site.Units == nil {
			if d, ok := cache[site.Name]; ok {
				d.Site = site
				out = append(out, naming.ReadOnlyGuard(d))
				continue
			}
		}
		var c mcpname.Classification
		if site.Units != nil {
			c = mcpname.ClassifyUnits(site.Units, pol.Index)
		} else {
			c = mcpname.Classify(site.Name, pol.Index)
		}
		d := decision(site, c, pol)
		if site.Units == nil {
			cache[site.Name] = d
		}
		out = append(out, naming.ReadOnlyGuard(d))
	}
	return out
}

// enrichIndex returns ix plus the store's legacy-dotted names as raw identities (ix itself is
// not modified; nil when there is nothing to know).
func enrichIndex(ix *mcpname.Index, snap *store.Snapshot) *mcpname.Index {
	var dotted []string
	for _, site := range snap.Sites {
		if site.Units == nil && mcpname.HasPrefix(site.Name) && !mcpname.IsProviderSafe(site.Name) && !mcpname.IsTruncationShape(site.Name) {
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

// decision applies the classes of naming.md to one classified name.
func decision(site *store.Site, c mcpname.Classification, pol naming.Policy) naming.Decision {
	d := naming.Decision{Site: site, Class: c.Class, Action: naming.ActNone}
	switch c.Class {
	case mcpname.ClassLegacyDotted:
		d.Action, d.New, d.Source = naming.ActRewrite, c.Registered, "normalizeMcp"
	case mcpname.ClassLegacyTruncatedDotted:
		if pol.KeepTruncated {
			d.Action, d.Note = naming.ActKeep, "middle-truncated legacy name kept (--keep-truncated)"
		} else {
			d.Action, d.New, d.Source = naming.ActRewrite, c.Registered, "normalizeMcp"
			d.Note = "middle-truncated: no current tool answers to the new name"
		}
		if c.Owner != "" {
			d.Note += fmt.Sprintf("; legacy spelling of %s (registered %s)", c.Owner, c.OwnerRegistered)
		}
	case mcpname.ClassLegacyTruncated:
		d.Action, d.Note = naming.ActKeep, "middle-truncated legacy name kept as it is (possibly truncated; its middle cannot be rebuilt)"
		if c.Owner == "" && mcpname.HasHashSuffix(site.Name) {
			// normalize keeps the "___" at 28 of a truncated dotted name and appends a
			// hash: this is most likely such a name already rewritten.
			d.Action, d.Note = naming.ActNone, "truncation shape with a hash suffix: most likely a middle-truncated dotted name already normalized"
		}
		if c.Owner != "" {
			d.Note += fmt.Sprintf("; legacy spelling of %s (registered %s)", c.Owner, c.OwnerRegistered)
		}
	case mcpname.ClassLossyLegacy:
		if pol.RewriteLossy {
			d.Action, d.New, d.Source = naming.ActRewrite, c.OwnerRegistered, "inventory: "+c.Owner
		} else {
			d.Action = naming.ActKeep
			d.Note = fmt.Sprintf("lossy legacy spelling of %s (registered %s); rewrite with --rewrite-lossy", c.Owner, c.OwnerRegistered)
		}
	}
	return d
}
