package store

import "context"

// BatchScanner is implemented by stores too large to hold every name site at once (a SQLite
// database of millions of rows): ScanBatches reads the store as Scan does but hands its sites
// to fn in bounded batches, in store order (a record's sites are never split across two
// batches), instead of collecting them in Snapshot.Sites. head is the snapshot being built
// (Ref, State and Agent are set; read it only during the call). fn owns the slice of sites:
// the store never reads or writes it again, so fn may keep it (and its strings and Raw
// bytes) without copying; an error from fn stops the scan and is returned. The returned Snapshot has everything Scan's has except Sites.
type BatchScanner interface {
	ScanBatches(ctx context.Context, opt ScanOptions, fn func(head *Snapshot, sites []Site) error) (*Snapshot, error)
}

// BatchWriter is implemented by stores that can apply edits read in batches: ApplyBatches is
// Apply (same guarantees: one transaction, a backup, nothing changed on error) with the edits
// returned by next, batch after batch, until next returns io.EOF. The edits must come in the
// order ScanBatches gave their sites (the edits of one record together, in offset order); the
// store holds no more than one batch at a time.
type BatchWriter interface {
	ApplyBatches(ctx context.Context, snap *Snapshot, next func() ([]Edit, error), opt ApplyOptions) (*Change, error)
}

// SpliceWriter is a BatchWriter that splices each edit into a copy of the store as the copy
// reaches the edit's offset (engine/jsonl): its batches may be cut between any two edits (in
// offset order), and of an edit it reads only Site.Loc.Offset, Site.Loc.Line (its messages),
// Site.Raw, Site.Field and New. A caller holding a store's whole plan hands its edits out a few
// thousand at a time through one reused slice, and one keeping edits on disk keeps only those
// fields, instead of a copy of every site (~250 bytes an edit: a fifth of the bytes fix --apply
// allocated on make bench's dense corpus).
//
// The caller may therefore reuse what next returned: a batch's slice and the bytes of its
// edits' Site.Raw stay valid only until next is called again (rewrite's spool reads the next
// chunk of edits into them). A SpliceWriter must be done with a batch (or copy what it keeps
// of it) before asking for the next one.
type SpliceWriter interface {
	BatchWriter
	SplicesEdits()
}

// BatchOptional is implemented by a BatchScanner whose stores are not all read in batches (a
// file engine whose profile says whether planning may see its sites batch by batch): with
// BatchScans false the store is scanned whole (Scan), like a store that is no BatchScanner.
type BatchOptional interface {
	BatchScans() bool
}

// Batches returns st as a BatchScanner when it is one that hands out batches.
func Batches(st Store) (BatchScanner, bool) {
	bs, ok := st.(BatchScanner)
	if o, opt := st.(BatchOptional); ok && opt && !o.BatchScans() {
		return nil, false
	}
	return bs, ok
}
