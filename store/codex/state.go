package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/sessionfix/sessionfix/store"
)

// CodexThread is one row of Codex's state_5.sqlite threads table, checked against the rollout
// file it points at.
type CodexThread struct {
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

// CodexThreads reads the threads of a Codex state database (state_5.sqlite) read-only and checks
// each rollout path: does the file exist, and does its name carry the thread id.
func CodexThreads(ctx context.Context, path string, opt Options) ([]CodexThread, error) {
	db, err := openDB(path, modeRO, opt.busy())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer conn.Close()
	var out []CodexThread
	err = eachCodexThread(ctx, conn, path, func(t CodexThread) { out = append(out, t) })
	return out, err
}

func eachCodexThread(ctx context.Context, conn *sqlx.Conn, dbPath string, fn func(CodexThread)) error {
	rows, err := conn.QueryxContext(ctx, `SELECT +id, +rollout_path FROM threads ORDER BY rowid`)
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

func checkThread(id, rollout, home string) CodexThread {
	t := CodexThread{ID: id, RolloutPath: rollout}
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

// checkCodexThreads reports, for the CodexState profile, threads whose rollout file is missing
// or does not carry the thread id (the rollout JSONL holds the model-facing names).
func checkCodexThreads(ctx context.Context, r *reader, snap *store.Snapshot) error {
	if !r.sch.has("threads", "id") || !r.sch.has("threads", "rollout_path") {
		snap.Problems = append(snap.Problems, store.Problem{Severity: store.SevWarning,
			Reason: "table threads has no id or rollout_path column: rollout files are not checked"})
		return nil
	}
	err := eachCodexThread(ctx, r.conn, r.path, func(t CodexThread) {
		snap.Records++
		loc := store.Loc{Row: rowLabel("threads", []string{"id"}, []any{t.ID})}
		switch {
		case t.Found == "":
			r.problem("missing rollout files", store.SevInfo, loc,
				fmt.Sprintf("rollout file %s not found (its model-facing names cannot be checked)", t.RolloutPath))
		case t.Found != t.RolloutPath:
			r.problem("moved rollout files", store.SevInfo, loc,
				fmt.Sprintf("rollout file recorded as %s is at %s", t.RolloutPath, t.Found))
		}
		if !t.NameMatches {
			r.problem("mismatched rollout file names", store.SevWarning, loc,
				fmt.Sprintf("rollout file name %s does not carry the thread id %s", filepath.Base(t.RolloutPath), t.ID))
		}
	})
	return err
}
