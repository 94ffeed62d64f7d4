package rewrite

import (
	"context"
	"errors"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/store"
)

// A run may move stores as well as rewrite them (fix --apply --move-legacy): a store an agent's
// newest release no longer opens where it lies (agent.Agent.Relocate) is renamed to where that
// release opens the same bytes, after the run's rewrites. How a move is journaled, recorded
// and undone is runlog's (runlog/move.go).

// MoveOutcome is what happened to one move of a run.
type MoveOutcome struct {
	Entry runlog.MoveEntry
	Err   error
	// Moved is set when the store is at its new name (and the move recorded): Err, if any,
	// came after the move (a *fileio.MovedError: a directory fsync, the journal).
	Moved bool
}

// Relocation is one move a plan asks for (a dry run prints it; Process with Apply makes it).
type Relocation struct {
	Ref store.Ref
	To  string
	Why string
}

// moveAll makes the moves of a run, in order, after its rewrites (runlog.Run.Move: each
// journaled and, when made, recorded in the manifest). A move that fails leaves the store
// where it was and is reported in its outcome; the others go on.
func (r *run) moveAll(ctx context.Context, rels []Relocation) []MoveOutcome {
	var out []MoveOutcome
	for _, rel := range rels {
		e, err := r.rec.Move(ctx, rel.Ref, rel.To, rel.Why)
		var moved *fileio.MovedError
		out = append(out, MoveOutcome{Entry: e, Err: err, Moved: err == nil || errors.As(err, &moved)})
	}
	return out
}
