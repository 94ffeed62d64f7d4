package rewrite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/store"
)

// goldenRun copies the run testdata/v3run-65eabee — made by the 65eabee binary (manifest
// version 3: Before.SHA256, After.Fingerprint XXH3-128) with `fix --apply --yes --state-dir st
// root` — into a temp directory: root/ holds the sessions as that run left them, orig/ as they
// were, st/runs/<id>/ the run. The absolute paths the run recorded (its roots, stores, backups,
// temps) are moved to the copy and the manifest and every journal line sealed again, as the
// run would have written them there. It returns the copy's root, orig and run directories.
func goldenRun(t *testing.T) (root, orig, runDir string) {
	t.Helper()
	return goldenRunOf(t, "v3run-65eabee")
}

// goldenRunOf is goldenRun for the run testdata/<name>, laid out the same way.
func goldenRunOf(t *testing.T, name string) (root, orig, runDir string) {
	t.Helper()
	src := filepath.Join("testdata", name)
	dst := t.TempDir()
	require.NoError(t, os.Chmod(dst, 0o700))
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o600)
	}))
	runs, err := os.ReadDir(filepath.Join(dst, "st", "runs"))
	require.NoError(t, err)
	require.Len(t, runs, 1)
	runDir = filepath.Join(dst, "st", "runs", runs[0].Name())
	mp, jp := filepath.Join(runDir, manifestName), filepath.Join(runDir, journalName)
	var m struct {
		Roots []string `json:"roots"`
	}
	raw, err := os.ReadFile(mp)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &m))
	require.Len(t, m.Roots, 1)
	was := filepath.Dir(m.Roots[0]) // the directory root/ and st/ were in
	move := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(was+"/"), []byte(dst+"/")) }
	raw = move(raw)
	copy(raw[len(manifestSealPrefix):], zeroSum)
	seal(raw, manifestSealPrefix)
	require.NoError(t, os.WriteFile(mp, raw, 0o600))
	j, err := os.ReadFile(jp)
	require.NoError(t, err)
	var lines [][]byte
	for _, l := range bytes.SplitAfter(j, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		l = move(bytes.TrimSuffix(l, []byte("\n")))
		copy(l[len(journalSealPrefix):], zeroSum)
		seal(l, journalSealPrefix)
		lines = append(lines, append(l, '\n'))
	}
	require.NoError(t, os.WriteFile(jp, bytes.Join(lines, nil), 0o600))
	return filepath.Join(dst, "root"), filepath.Join(dst, "orig"), runDir
}

// sameTree asserts that every file under want has the same bytes under got, and got no others.
func sameTree(t *testing.T, want, got string) {
	t.Helper()
	n := 0
	require.NoError(t, filepath.WalkDir(want, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(want, p)
		w, _ := os.ReadFile(p)
		g, err := os.ReadFile(filepath.Join(got, rel))
		require.NoError(t, err, rel)
		assert.True(t, bytes.Equal(w, g), "%s: byte for byte", rel)
		n++
		return nil
	}))
	m := 0
	require.NoError(t, filepath.WalkDir(got, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			m++
		}
		return err
	}))
	assert.Equal(t, n, m, "no other files")
}

// A version 3 run (the 65eabee binary's: the original's checksum is its SHA-256,
// Before.SHA256) is still undone, byte for byte, its backups checked by SHA-256; the manifest
// undo writes back is read again.
func TestUndoOfAVersion3Run(t *testing.T) {
	root, orig, runDir := goldenRun(t)
	m, err := runlog.ReadRun(runDir)
	require.NoError(t, err)
	assert.Equal(t, 3, m.Version)
	require.Len(t, m.Files, 2)
	for _, f := range m.Files {
		assert.Len(t, f.Before.SHA256, 64, "%s: a version 3 run records the original's SHA-256", f.Ref.Path)
		assert.Empty(t, f.Before.Fingerprint)
		assert.True(t, strings.HasPrefix(f.After.Fingerprint, "xxh3-128:"))
	}
	require.NoError(t, runlog.CheckRun(runDir, m))
	now := func() time.Time { return time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC) }
	outs, m2, err := runlog.UndoRun(context.Background(), runDir, m, all.Open, false, now)
	require.NoError(t, err)
	require.Len(t, outs, 2)
	for _, o := range outs {
		assert.NoError(t, o.Err, o.Ref.Path)
	}
	assert.Equal(t, runlog.StateUndone, m2.State)
	sameTree(t, orig, root)
	m3, err := runlog.ReadRun(runDir)
	require.NoError(t, err)
	assert.Equal(t, runlog.StateUndone, m3.State)
}

// The same run with one byte of a backup changed (same size): that store is refused as
// damaged (SHA-256 of a version 3 backup), the other restored.
func TestUndoOfAVersion3RunRefusesADamagedBackup(t *testing.T) {
	root, orig, runDir := goldenRun(t)
	m, err := runlog.ReadRun(runDir)
	require.NoError(t, err)
	bk := m.Files[0].Backup
	b, err := os.ReadFile(bk)
	require.NoError(t, err)
	b[10] ^= 1
	require.NoError(t, os.WriteFile(bk, b, 0o600))
	after, _ := os.ReadFile(m.Files[0].Ref.Path)
	outs, _, err := undo(context.Background(), runDir, all.Open, false, time.Now)
	require.NoError(t, err)
	for _, o := range outs {
		if o.Ref.Path == m.Files[0].Ref.Path {
			require.Error(t, o.Err)
			assert.Contains(t, o.Err.Error(), "is damaged: sha256 of its first")
		} else {
			assert.NoError(t, o.Err)
			rel, _ := filepath.Rel(root, o.Ref.Path)
			want, _ := os.ReadFile(filepath.Join(orig, rel))
			got, _ := os.ReadFile(o.Ref.Path)
			assert.Equal(t, want, got)
		}
	}
	got, _ := os.ReadFile(m.Files[0].Ref.Path)
	assert.Equal(t, after, got, "the damaged backup's store keeps the run's content")
}

// editManifest rewrites manifest.json of runDir through edit (the manifest decoded as generic
// JSON) and seals it again: an edit whoever can write the run directory can make.
func editManifest(t *testing.T, runDir string, edit func(m map[string]any)) {
	t.Helper()
	mp := filepath.Join(runDir, manifestName)
	raw, err := os.ReadFile(mp)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	edit(m)
	m["checksum"] = sealPlaceholder
	b, err := json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	b = append(b, '\n')
	require.True(t, bytes.HasPrefix(b, manifestSealPrefix))
	seal(b, manifestSealPrefix)
	require.NoError(t, os.WriteFile(mp, b, 0o600))
}

// A version 4 entry's checksum of the original (Before.Fingerprint, "xxh3-128:<32 hex>") is
// what undo checks the backup with: an entry with it removed, of an unknown or a weaker
// algorithm, of the wrong length or case, or recorded twice (with a sha256 beside it), is
// refused by CheckRun with an *UntrustedError naming the run, the entry and the reason, and
// nothing is restored. The same entry with a correct SHA-256 in its place (the spelling of
// versions 1 to 3 and of a SQLite change) is undone.
func TestCheckRunRefusesAVersion4EntryWithoutAUsableChecksum(t *testing.T) {
	cases := []struct {
		name string
		edit func(before map[string]any, orig []byte)
		want string // "" when undo restores
	}{
		{"removed", func(b map[string]any, _ []byte) { delete(b, "fingerprint") }, "neither sha256 nor fingerprint is recorded"},
		{"unknown algorithm", func(b map[string]any, _ []byte) {
			b["fingerprint"] = "md5:" + strings.Repeat("0", 32)
		}, "is of an unknown algorithm"},
		{"crc32c", func(b map[string]any, _ []byte) { b["fingerprint"] = "crc32c:0badf00d" }, "is of an unknown algorithm"},
		{"no prefix", func(b map[string]any, _ []byte) {
			b["fingerprint"] = strings.TrimPrefix(b["fingerprint"].(string), "xxh3-128:")
		}, "is of an unknown algorithm"},
		{"short", func(b map[string]any, _ []byte) {
			s := b["fingerprint"].(string)
			b["fingerprint"] = s[:len(s)-1]
		}, "is not xxh3-128: and 32 lowercase hex digits"},
		{"long", func(b map[string]any, _ []byte) { b["fingerprint"] = b["fingerprint"].(string) + "0" }, "is not xxh3-128: and 32 lowercase hex digits"},
		{"upper case", func(b map[string]any, _ []byte) {
			b["fingerprint"] = "xxh3-128:" + strings.ToUpper(strings.TrimPrefix(b["fingerprint"].(string), "xxh3-128:"))
		}, "is not xxh3-128: and 32 lowercase hex digits"},
		{"both", func(b map[string]any, orig []byte) { b["sha256"] = sha256Hex(orig) }, "both sha256 and fingerprint are recorded"},
		{"short sha256", func(b map[string]any, orig []byte) {
			delete(b, "fingerprint")
			b["sha256"] = sha256Hex(orig)[:63]
		}, "is not 64 lowercase hex digits"},
		{"sha256 instead", func(b map[string]any, orig []byte) {
			delete(b, "fingerprint")
			b["sha256"] = sha256Hex(orig)
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := writeSession(t, dir, "a.jsonl", call("1", "mcp__a.b__c"), resp("1", "mcp__a.b__c"))
			b := writeSession(t, dir, "b.jsonl", call("1", "mcp__x.y__z"))
			orig := map[string][]byte{}
			for _, p := range []string{a, b} {
				orig[p], _ = os.ReadFile(p)
			}
			state := filepath.Join(t.TempDir(), "state")
			res, err := Apply(context.Background(), Build(scanned(t, a, b), naming.Policy{}), ApplyOptions{StateDir: state, Now: time.Now})
			require.NoError(t, err)
			after := map[string][]byte{}
			for _, p := range []string{a, b} {
				after[p], _ = os.ReadFile(p)
			}
			var first string
			editManifest(t, res.Dir, func(m map[string]any) {
				require.EqualValues(t, runlog.ManifestVersion, m["version"])
				f := m["files"].([]any)[0].(map[string]any)
				first = f["store"].(map[string]any)["path"].(string)
				before := f["before"].(map[string]any)
				require.Contains(t, before, "fingerprint")
				require.NotContains(t, before, "sha256")
				tc.edit(before, orig[first])
			})
			outs, _, err := undo(context.Background(), res.Dir, all.Open, false, time.Now)
			if tc.want == "" {
				require.NoError(t, err)
				for _, o := range outs {
					assert.NoError(t, o.Err)
				}
				for _, p := range []string{a, b} {
					got, _ := os.ReadFile(p)
					assert.Equal(t, orig[p], got, "%s restored", p)
				}
				return
			}
			var ue *runlog.UntrustedError
			require.True(t, errors.As(err, &ue), "%v", err)
			assert.ErrorIs(t, err, runlog.ErrUntrustedRun)
			assert.Equal(t, res.RunID, ue.Run)
			assert.Equal(t, `manifest entry 1 (store "`+first+`")`, ue.Where)
			assert.Contains(t, ue.Reason, `the checksum of the original ("before")`)
			assert.Contains(t, ue.Reason, tc.want)
			assert.Contains(t, err.Error(), "nothing was restored")
			assert.Empty(t, outs)
			for _, p := range []string{a, b} {
				got, _ := os.ReadFile(p)
				assert.Equal(t, after[p], got, "%s keeps the run's content", p)
			}
		})
	}
}

// A manifest of a version this binary does not know (a later sessionfix's) is refused as a
// whole, saying so, rather than read as if it were this version.
func TestReadRunRefusesALaterManifestVersion(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("1", "mcp__a.b__c"))
	res, err := Apply(context.Background(), Build(scanned(t, a), naming.Policy{}), ApplyOptions{StateDir: filepath.Join(t.TempDir(), "state"), Now: time.Now})
	require.NoError(t, err)
	after, _ := os.ReadFile(a)
	editManifest(t, res.Dir, func(m map[string]any) { m["version"] = runlog.ManifestVersion + 1 })
	_, err = runlog.ReadRun(res.Dir)
	var ue *runlog.UntrustedError
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Equal(t, manifestName, ue.Where)
	assert.Contains(t, ue.Reason, fmt.Sprintf("version %d manifest, written by a newer sessionfix (this one reads versions 1 to %d)", runlog.ManifestVersion+1, runlog.ManifestVersion))
	outs, _, err := undo(context.Background(), res.Dir, all.Open, false, time.Now)
	require.ErrorIs(t, err, runlog.ErrUntrustedRun)
	assert.Empty(t, outs)
	got, _ := os.ReadFile(a)
	assert.Equal(t, after, got)
}

// The algorithm that checks a backup is said by the entry's own record, not by the manifest's
// version: a version 4 run whose manifest an older binary's undo wrote back (the 65eabee
// binary refuses every full restore of it, "backup … is damaged: … want " with nothing after
// want, and writes the manifest again as version 3, the XXH3-128 records kept) is undone by
// this one byte for byte.
func TestUndoOfAVersion4RunRelabelledByAnOlderUndo(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("1", "mcp__a.b__c"), resp("1", "mcp__a.b__c"))
	orig, _ := os.ReadFile(a)
	res, err := Apply(context.Background(), Build(scanned(t, a), naming.Policy{}), ApplyOptions{StateDir: filepath.Join(t.TempDir(), "state"), Now: time.Now})
	require.NoError(t, err)
	editManifest(t, res.Dir, func(m map[string]any) { m["version"] = 3 })
	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	require.Equal(t, 3, m.Version)
	require.True(t, strings.HasPrefix(m.Files[0].Before.Fingerprint, "xxh3-128:"))
	outs, _, err := undo(context.Background(), res.Dir, all.Open, false, time.Now)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	require.NoError(t, outs[0].Err)
	got, _ := os.ReadFile(a)
	assert.Equal(t, orig, got)
}

// A SQLite change records the original's SHA-256 (engine/sqlite checks its backup with nothing
// else): an entry of kind sqlite whose record of the original is an XXH3-128 fingerprint
// instead — well formed for a file rewrite — is refused by CheckRun as a whole, before
// anything is restored, not by the database's restore after the run's other stores were put
// back ("backup … is damaged: sha256 …, want " with nothing after want).
func TestCheckRunRefusesADatabaseEntryWithoutItsSHA256(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("1", "mcp__a.b__c"), resp("1", "mcp__a.b__c"))
	b := writeSession(t, dir, "b.jsonl", call("1", "mcp__x.y__z"))
	res, err := Apply(context.Background(), Build(scanned(t, a, b), naming.Policy{}), ApplyOptions{StateDir: filepath.Join(t.TempDir(), "state"), Now: time.Now})
	require.NoError(t, err)
	after := map[string][]byte{}
	for _, p := range []string{a, b} {
		after[p], _ = os.ReadFile(p)
	}
	var second string
	editManifest(t, res.Dir, func(m map[string]any) {
		f := m["files"].([]any)[1].(map[string]any)
		second = f["store"].(map[string]any)["path"].(string)
		f["store"].(map[string]any)["kind"] = string(store.KindSQLite)
		require.True(t, strings.HasPrefix(f["before"].(map[string]any)["fingerprint"].(string), "xxh3-128:"))
	})
	outs, _, err := undo(context.Background(), res.Dir, all.Open, false, time.Now)
	var ue *runlog.UntrustedError
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Equal(t, `manifest entry 2 (store "`+second+`")`, ue.Where)
	assert.Contains(t, ue.Reason, `the checksum of the original ("before")`)
	assert.Contains(t, ue.Reason, "a database's backup is checked by its sha256, which the entry does not record")
	assert.Empty(t, outs)
	for _, p := range []string{a, b} {
		got, _ := os.ReadFile(p)
		assert.Equal(t, after[p], got, "%s keeps the run's content", p)
	}
}
