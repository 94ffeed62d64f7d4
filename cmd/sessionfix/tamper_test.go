package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resealManifest writes m as manifest.json with a valid checksum, as an attacker who knows the
// scheme would (the checksum is no secret: the structural checks must hold on their own).
func resealManifest(t *testing.T, path string, m map[string]any) {
	t.Helper()
	m["checksum"] = "sha256:" + strings.Repeat("0", 64)
	b, err := json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	b = append(b, '\n')
	prefix := []byte("{\n  \"checksum\": \"sha256:")
	require.True(t, bytes.HasPrefix(b, prefix), "checksum is the first member")
	sum := sha256.Sum256(b)
	hex.Encode(b[len(prefix):len(prefix)+64], sum[:])
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

func fileSum(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestUndoRefusesTamperedRuns (issue 9, finding 8): every way of making undo write outside the
// run's roots, read a file outside its run directory, follow a symlink or restore a setuid mode
// is refused with a message naming the entry, and nothing — inside or outside the roots — is
// changed. The original main restored every one of them.
func TestUndoRefusesTamperedRuns(t *testing.T) {
	type tamper struct {
		name string
		// edit changes the manifest (decoded) and the run directory; it returns false when the
		// manifest must be written back without a valid checksum.
		edit func(t *testing.T, runDir string, m map[string]any, f map[string]any, victim string) (reseal bool)
		want string
	}
	setBefore := func(f map[string]any, p string, t *testing.T) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		bf := f["before"].(map[string]any)
		bf["size"] = len(b)
		bf["sha256"] = fileSum(t, p)
	}
	setAfterToVictim := func(f map[string]any, victim string, t *testing.T) {
		f["after"].(map[string]any)["sha256"] = fileSum(t, victim)
	}
	cases := []tamper{
		{"path outside roots", func(t *testing.T, _ string, _, f map[string]any, victim string) bool {
			f["store"].(map[string]any)["path"] = victim
			setAfterToVictim(f, victim, t)
			return true
		}, "the store path is outside the run's roots"},
		{"path with ..", func(t *testing.T, _ string, m, f map[string]any, victim string) bool {
			root := m["roots"].([]any)[0].(string)
			rel, _ := filepath.Rel(root, victim)
			f["store"].(map[string]any)["path"] = root + "/" + rel
			setAfterToVictim(f, victim, t)
			return true
		}, "is not absolute and clean"},
		{"backup outside run dir", func(t *testing.T, _ string, _, f map[string]any, victim string) bool {
			f["backup"] = victim
			f["backup_is_link"] = false
			setBefore(f, victim, t)
			return true
		}, "not in this run's backups directory"},
		{"backup with .. into another dir", func(t *testing.T, runDir string, _, f map[string]any, victim string) bool {
			rel, _ := filepath.Rel(filepath.Join(runDir, "backups"), victim)
			f["backup"] = filepath.Join(runDir, "backups") + "/" + rel
			setBefore(f, victim, t)
			return true
		}, "not an absolute clean path"},
		{"symlink backup", func(t *testing.T, _ string, _, f map[string]any, victim string) bool {
			b := f["backup"].(string)
			require.NoError(t, os.Remove(b))
			require.NoError(t, os.Symlink(victim, b))
			setBefore(f, victim, t)
			return true
		}, "not a regular file"},
		{"setuid mode", func(t *testing.T, _ string, _, f map[string]any, _ string) bool {
			bf := f["before"].(map[string]any)
			bf["mode"] = float64(0o755 | int(os.ModeSetuid))
			return true
		}, "has setuid, which the backup or the store does not have"},
		{"setgid mode", func(t *testing.T, _ string, _, f map[string]any, _ string) bool {
			bf := f["before"].(map[string]any)
			bf["mode"] = float64(0o755 | int(os.ModeSetgid))
			return true
		}, "has setgid"},
		{"symlink in the store path", func(t *testing.T, _ string, m, f map[string]any, victim string) bool {
			root := m["roots"].([]any)[0].(string)
			link := filepath.Join(root, "link")
			require.NoError(t, os.Symlink(filepath.Dir(victim), link))
			f["store"].(map[string]any)["path"] = filepath.Join(link, filepath.Base(victim))
			setAfterToVictim(f, victim, t)
			return true
		}, "is a symlink"},
		{"FIFO as the store", func(t *testing.T, _ string, m, f map[string]any, _ string) bool {
			root := m["roots"].([]any)[0].(string)
			fifo := filepath.Join(root, "fifo.jsonl")
			require.NoError(t, syscall.Mkfifo(fifo, 0o600))
			f["store"].(map[string]any)["path"] = fifo
			return true
		}, "the store is not a regular file"},
		{"edited manifest only", func(t *testing.T, _ string, _, f map[string]any, victim string) bool {
			f["store"].(map[string]any)["path"] = victim
			setAfterToVictim(f, victim, t)
			return false
		}, "manifest.json: its checksum does not match"},
		{"checksum removed", func(t *testing.T, _ string, m, _ map[string]any, _ string) bool {
			delete(m, "checksum")
			return false
		}, "without a valid checksum"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(t)
			dir := fixtureCopy(t)
			state := filepath.Join(t.TempDir(), "S")
			outside := t.TempDir()
			victim := filepath.Join(outside, "victim.jsonl")
			require.NoError(t, os.WriteFile(victim, []byte("{\"victim\":true}\n"), 0o644))
			r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
			require.Equal(t, 0, r.code, r.out+r.err)
			runs, _ := os.ReadDir(filepath.Join(state, "runs"))
			require.Len(t, runs, 1)
			runDir := filepath.Join(state, "runs", runs[0].Name())
			mp := filepath.Join(runDir, "manifest.json")
			var m map[string]any
			b, err := os.ReadFile(mp)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &m))
			files := m["files"].([]any)
			f := files[0].(map[string]any)
			if tc.edit(t, runDir, m, f, victim) {
				resealManifest(t, mp, m)
			} else {
				b, err := json.MarshalIndent(m, "", "  ")
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(mp, append(b, '\n'), 0o600))
			}
			fixed := regularFiles(t, dir)
			outBefore := snapshotTree(t, outside)

			r = runCLI(t, env, "", "undo", "--state-dir", state, runs[0].Name())
			assert.Equal(t, exitcode.Error, r.code, r.out+r.err)
			assert.Contains(t, r.err, "run refused "+runs[0].Name())
			assert.Contains(t, r.err, tc.want)
			if tc.want != "manifest.json: its checksum does not match" && tc.want != "without a valid checksum" {
				assert.Contains(t, r.err, "manifest entry 1 (store ")
			}
			assert.Contains(t, r.err, "nothing was restored")
			assert.NotContains(t, r.out, "to restore", "a refused run is not announced as being undone")
			assert.Equal(t, outBefore, snapshotTree(t, outside), "nothing outside the roots changes")
			assert.Equal(t, fixed, regularFiles(t, dir), "nothing inside the roots is restored from a tampered run")

			r = runCLI(t, env, "", "undo", "--force", "--yes", "--state-dir", state, runs[0].Name())
			assert.Equal(t, exitcode.Error, r.code, "--force does not override a refused run")
			assert.Equal(t, outBefore, snapshotTree(t, outside))
		})
	}
}

// TestUndoRefusesEditedJournal: an interrupted run (manifest still "applying") is undone from
// its journal; a journal line edited by hand is refused, and so is it when the manifest is
// final (undo checks the journal anyway).
func TestUndoRefusesEditedJournal(t *testing.T) {
	for _, final := range []bool{false, true} {
		env := testEnv(t)
		dir := fixtureCopy(t)
		state := filepath.Join(t.TempDir(), "S")
		outside := t.TempDir()
		victim := filepath.Join(outside, "victim.jsonl")
		require.NoError(t, os.WriteFile(victim, []byte("{\"victim\":true}\n"), 0o644))
		r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
		require.Equal(t, 0, r.code, r.out+r.err)
		runs, _ := os.ReadDir(filepath.Join(state, "runs"))
		runDir := filepath.Join(state, "runs", runs[0].Name())
		if !final {
			// as if killed before the final manifest: recovery reads the journal
			var m map[string]any
			b, _ := os.ReadFile(filepath.Join(runDir, "manifest.json"))
			require.NoError(t, json.Unmarshal(b, &m))
			m["state"], m["files"] = "applying", []any{}
			resealManifest(t, filepath.Join(runDir, "manifest.json"), m)
		}
		jp := filepath.Join(runDir, "journal.jsonl")
		j, err := os.ReadFile(jp)
		require.NoError(t, err)
		lines := bytes.SplitAfter(j, []byte("\n"))
		n := -1
		var e map[string]any
		for i, l := range lines {
			if bytes.Contains(l, []byte(`"event":"commit"`)) {
				n = i
				require.NoError(t, json.Unmarshal(l, &e))
				break
			}
		}
		require.GreaterOrEqual(t, n, 0, "the journal has a commit line")
		path := e["entry"].(map[string]any)["store"].(map[string]any)["path"].(string)
		lines[n] = bytes.Replace(lines[n], []byte(path), []byte(victim), 1)
		require.NoError(t, os.WriteFile(jp, bytes.Join(lines, nil), 0o600))
		fixed := snapshotTree(t, dir)

		r = runCLI(t, env, "", "undo", "--state-dir", state, runs[0].Name())
		assert.Equal(t, exitcode.Error, r.code, r.out+r.err)
		assert.Contains(t, r.err, fmt.Sprintf("journal.jsonl line %d: its checksum does not match", n+1), "final=%v", final)
		assert.Equal(t, fixed, snapshotTree(t, dir))
		assert.Equal(t, "{\"victim\":true}\n", string(must(os.ReadFile(victim))))
		r = runCLI(t, env, "", "runs", "--state-dir", state)
		assert.Contains(t, r.out+r.err, "checksum does not match", "runs lists the run as unreadable")
	}
}

// regularFiles is snapshotTree of the regular files only (a FIFO would block the read).
func regularFiles(t *testing.T, root string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	for p, st := range snapshotTreeFunc(t, root, func(fi os.FileInfo) bool { return fi.Mode().IsRegular() }) {
		out[p] = st
	}
	return out
}

func snapshotTreeFunc(t *testing.T, root string, keep func(os.FileInfo) bool) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		require.NoError(t, err)
		if !keep(fi) {
			return nil
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		s := sha256.Sum256(b)
		out[p] = fileState{hex.EncodeToString(s[:]), fi.Mode(), fi.ModTime()}
		return nil
	}))
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestUndoRefusesARunOthersCouldWrite (issue 9, finding 8; review3): the roots the path checks
// rely on are part of the manifest and its checksum is a plain SHA-256, so a run re-sealed
// with roots ["/"] passes every path check. Undo must then refuse a run that someone other
// than the user running it could have written: a manifest owned by another uid, a run
// directory or manifest writable by group or others. The original main (and main before this test)
// restored the victim, an existing *.jsonl outside the real roots, from such a run.
func TestUndoRefusesARunOthersCouldWrite(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a run file another owner")
	}
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, runDir string)
		want string
	}{
		{"manifest of another user", func(t *testing.T, runDir string) {
			require.NoError(t, os.Chown(filepath.Join(runDir, "manifest.json"), 12345, 12345))
		}, "is owned by uid 12345"},
		{"group-writable run directory", func(t *testing.T, runDir string) {
			require.NoError(t, os.Chmod(runDir, 0o770))
		}, "is writable by group or others"},
		{"world-writable manifest", func(t *testing.T, runDir string) {
			require.NoError(t, os.Chmod(filepath.Join(runDir, "manifest.json"), 0o666))
		}, "is writable by group or others"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(t)
			dir := fixtureCopy(t)
			state := filepath.Join(t.TempDir(), "S")
			outside := t.TempDir()
			victim := filepath.Join(outside, "victim.jsonl")
			require.NoError(t, os.WriteFile(victim, []byte("{\"victim\":true}\n"), 0o600))
			r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
			require.Equal(t, 0, r.code, r.out+r.err)
			runs, _ := os.ReadDir(filepath.Join(state, "runs"))
			require.Len(t, runs, 1)
			runDir := filepath.Join(state, "runs", runs[0].Name())
			mp := filepath.Join(runDir, "manifest.json")
			var m map[string]any
			b, err := os.ReadFile(mp)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &m))
			f := m["files"].([]any)[0].(map[string]any)
			m["roots"] = []any{"/"}
			f["store"].(map[string]any)["path"] = victim
			f["store"].(map[string]any)["kind"] = "codex-rollout"
			f["after"].(map[string]any)["sha256"] = fileSum(t, victim)
			delete(f, "sites")
			m["files"] = []any{f}
			resealManifest(t, mp, m)
			tc.edit(t, runDir)
			before, err := os.ReadFile(victim)
			require.NoError(t, err)

			r = runCLI(t, env, "", "undo", "--state-dir", state, runs[0].Name())
			assert.Equal(t, exitcode.Error, r.code, r.out+r.err)
			assert.Contains(t, r.err, "run refused "+runs[0].Name())
			assert.Contains(t, r.err, tc.want)
			got, err := os.ReadFile(victim)
			require.NoError(t, err)
			assert.Equal(t, string(before), string(got), "the victim outside the real roots is unchanged")
			fi, err := os.Stat(victim)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "and keeps its mode")
		})
	}
}
