package rewrite

import (
	"sort"

	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// Scanned pairs a store with its snapshot.
type Scanned struct {
	Store store.Store
	Snap  *store.Snapshot
}

// Build makes the plan Apply takes for scanned stores (snapshots with their stores), for the
// tests: stores that could not be read are left out; each store is planned on its own
// (PlanStore), as the streaming Process plans it, so both give the same decisions.
func Build(scanned []Scanned, pol naming.Policy) *Plan {
	p := &Plan{}
	for _, s := range scanned {
		if s.Snap == nil {
			continue
		}
		p.Stores = append(p.Stores, PlanStore(s.Store, s.Snap, pol))
	}
	sort.Slice(p.Stores, func(i, j int) bool { return p.Stores[i].Snap.Ref.Path < p.Stores[j].Snap.Ref.Path })
	return p
}
