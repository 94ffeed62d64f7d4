package codex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
)

// HistoryProfile is Codex's thread_history_1.sqlite: mcpToolCall items hold the raw server key
// and tool name, a ready inventory; they are reported as Snapshot.Identities and never rewritten
// (the model-facing names live in the rollout JSONL).
var HistoryProfile = &sqlite.Profile{
	Name:   "codex",
	Agent:  ID,
	Detect: []string{"thread_items.item_json"},
	Tables: []sqlite.TableSpec{
		{Table: "thread_items", Column: "item_json", CallScope: "thread_id", Sites: []sqlite.SiteSpec{
			{Path: "$.tool", When: &sqlite.JSONCond{Path: "$.type", In: []string{"mcpToolCall"}}, Identity: true, Server: "$.server", CallID: "$.id"},
		}},
	},
}

// IsHistory reports whether st is a SQLite store read as a Codex thread history
// (HistoryProfile, as detected by its Scan).
func IsHistory(st store.Store) bool {
	db, ok := st.(*sqlite.Store)
	return ok && db.Profile() == HistoryProfile
}

// OpenHistory opens path as a Codex thread history (HistoryProfile) with the SQLite options
// opt (busy timeout, read-only handling); it does not touch the file.
func OpenHistory(path string, opt sqlite.Options) store.Store {
	return sqlite.OpenWith(path, HistoryProfile, opt)
}

// StateProfile is Codex's state_5.sqlite: no name sites, but threads.rollout_path ties each
// thread to its rollout JSONL; Scan reports threads whose rollout file is missing or named for
// another thread (see Threads).
var StateProfile = &sqlite.Profile{
	Name:   "codex-state",
	Agent:  ID,
	Detect: []string{"threads.rollout_path"},
	Check:  checkThreads,
}

// Thread is one row of Codex's state_5.sqlite threads table, checked against the rollout
// file it points at.
type Thread struct {
	ID string `json:"id"`
	// RolloutPath is the path as recorded.
	RolloutPath string `json:"rollout_path"`
	// Found is where the rollout file is: RolloutPath, or the same path under the directory
	// holding the database (a copied or moved ~/.codex); "" when neither exists.
	Found string `json:"found,omitempty"`
	// NameMatches says the rollout file name ends with the thread id
	// ("rollout-<time>-<id>.jsonl", optionally ".zst").
	NameMatches bool `json:"name_matches"`
}

// Threads reads the threads of a Codex state database (state_5.sqlite) read-only and checks
// each rollout path: does the file exist, and does its name carry the thread id.
func Threads(ctx context.Context, path string, opt sqlite.Options) ([]Thread, error) {
	var out []Thread
	err := sqlite.Read(ctx, path, opt, func(db *sqlite.DB) error {
		return eachThread(ctx, db, func(t Thread) { out = append(out, t) })
	})
	return out, err
}

func eachThread(ctx context.Context, db *sqlite.DB, fn func(Thread)) error {
	dbPath := db.Path()
	rows, err := db.Query(ctx, `SELECT +id, +rollout_path FROM threads ORDER BY rowid`)
	if err != nil {
		return fmt.Errorf("read threads of %s: %w", dbPath, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, rp string
		if err := rows.Scan(&id, &rp); err != nil {
			return fmt.Errorf("read threads of %s: %w", dbPath, err)
		}
		fn(checkThread(id, rp, filepath.Dir(dbPath)))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read threads of %s: %w", dbPath, err)
	}
	return nil
}

func checkThread(id, rollout, home string) Thread {
	t := Thread{ID: id, RolloutPath: rollout}
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(rollout), ".zst"), ".jsonl")
	t.NameMatches = id != "" && strings.HasSuffix(base, "-"+id)
	if fi, err := os.Stat(rollout); err == nil && fi.Mode().IsRegular() {
		t.Found = rollout
		return t
	}
	slashed := filepath.ToSlash(rollout)
	for _, dir := range []string{"/sessions/", "/archived_sessions/"} {
		if i := strings.LastIndex(slashed, dir); i >= 0 {
			alt := filepath.Join(home, filepath.FromSlash(slashed[i+1:]))
			if fi, err := os.Stat(alt); err == nil && fi.Mode().IsRegular() {
				t.Found = alt
				return t
			}
		}
	}
	return t
}

// checkThreads reports, for StateProfile, threads whose rollout file is missing or does not
// carry the thread id (the rollout JSONL holds the model-facing names).
func checkThreads(ctx context.Context, db *sqlite.DB, snap *store.Snapshot) error {
	if !db.Has("threads", "id") || !db.Has("threads", "rollout_path") {
		snap.Problems = append(snap.Problems, store.Problem{Severity: store.SevWarning,
			Reason: "table threads has no id or rollout_path column: rollout files are not checked"})
		return nil
	}
	err := eachThread(ctx, db, func(t Thread) {
		snap.Records++
		loc := store.Loc{Row: sqlite.RowLabel("threads", []string{"id"}, []any{t.ID})}
		switch {
		case t.Found == "":
			db.Problem(snap, "missing rollout files", store.SevInfo, loc,
				fmt.Sprintf("rollout file %s not found (its model-facing names cannot be checked)", t.RolloutPath))
		case t.Found != t.RolloutPath:
			db.Problem(snap, "moved rollout files", store.SevInfo, loc,
				fmt.Sprintf("rollout file recorded as %s is at %s", t.RolloutPath, t.Found))
		}
		if !t.NameMatches {
			db.Problem(snap, "mismatched rollout file names", store.SevWarning, loc,
				fmt.Sprintf("rollout file name %s does not carry the thread id %s", filepath.Base(t.RolloutPath), t.ID))
		}
	})
	return err
}
