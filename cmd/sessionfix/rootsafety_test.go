package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of issue 30 (root over untrusted homes) that need no second user.

// TestUndoForceSaysWhereTheChangesWent (issue 30 finding 8): undo --force over a session that
// changed since the run (a line added at the top, not an append: the edits cannot be reversed in
// place) restores the backup, and says where what the session held before the undo is kept —
// the "<backup>.before-undo" file holding that added line — in text and in JSON ("kept"). A
// store that had not changed names no such file.
func TestUndoForceSaysWhereTheChangesWent(t *testing.T) {
	for _, format := range []string{"table", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := fixtureCopy(t)
			state := filepath.Join(t.TempDir(), "S")
			env := testEnv(t)
			r := runCLI(t, env, "", "fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir)
			require.Equal(t, exitOK, r.code, r.err)
			f := filepath.Join(dir, "projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl")
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			edited := append([]byte("{\"type\":\"edited-by-hand\"}\n"), b...)
			require.NoError(t, os.WriteFile(f, edited, 0o640))

			r = runCLI(t, env, "", "undo", "--last", "--force", "--yes", "--format", format, "--state-dir", state)
			require.Equal(t, exitOK, r.code, r.err)
			var kept string
			if format == "json" {
				var rep undoReport
				require.NoError(t, json.Unmarshal([]byte(r.out), &rep))
				for _, file := range rep.Files {
					if file.Path == f {
						kept = file.Kept
					} else {
						assert.Empty(t, file.Kept, "%s had not changed", file.Path)
					}
				}
			} else {
				var line string
				for _, l := range strings.Split(r.out, "\n") {
					if strings.Contains(l, f) {
						line = l
					} else {
						assert.NotContains(t, l, "kept at", "only the changed store names a kept file")
					}
				}
				before, after, ok := strings.Cut(line, "; it had changed since the run: what it held before this undo is kept at ")
				require.True(t, ok, r.out)
				assert.Equal(t, "  restored "+f+" (15 names)", before)
				kept = after
			}
			require.NotEmpty(t, kept, r.out)
			assert.True(t, strings.HasSuffix(kept, ".before-undo"), kept)
			got, err := os.ReadFile(kept)
			require.NoError(t, err)
			assert.Equal(t, string(edited), string(got), "the kept file holds what the session held before the undo")
		})
	}
}
