package rewrite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// The final manifest is streamed from the journal: byte for byte what marshalManifest writes
// for the same manifest held whole (entries in path order, the seal over every byte), and the
// run keeps no entry in memory.
func TestStreamedManifestIsTheMarshalledManifest(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	// Written out of path order; names with characters JSON escapes (<, &, a quote via \u).
	for _, n := range []string{"c", "a", "e", "b", "d"} {
		paths = append(paths, writeSession(t, dir, n+".jsonl",
			call("1", "mcp__"+n+".srv__t<x>&y"), resp("1", "mcp__"+n+".srv__t<x>&y"), call("2", "mcp__ok__fine")))
	}
	state := filepath.Join(t.TempDir(), "state")
	now := func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }
	res, err := Apply(context.Background(), Build(scanned(t, paths...), naming.Policy{}), ApplyOptions{StateDir: state, Now: now, Command: `test "files": [] <cmd>`})
	require.NoError(t, err)
	assert.Equal(t, 5, res.Files)
	assert.Nil(t, res.Manifest.Files, "the result holds no file entries")

	raw, err := os.ReadFile(filepath.Join(res.Dir, manifestName))
	require.NoError(t, err)
	m, err := ReadRun(res.Dir) // checks the seal
	require.NoError(t, err)
	require.Len(t, m.Files, 5)
	whole := *m
	whole.Files = nil
	for i, n := range []string{"a", "b", "c", "d", "e"} {
		assert.Equal(t, filepath.Join(dir, n+".jsonl"), m.Files[i].Ref.Path)
		assert.Nil(t, m.Files[i].Sites, "ReadRun keeps entries light")
		e, err := m.Entry(i)
		require.NoError(t, err)
		require.Len(t, e.Sites, 2)
		whole.Files = append(whole.Files, *e)
	}
	want, err := marshalManifest(&whole)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(raw))
}

func TestStreamManifestMatchesMarshalManifest(t *testing.T) {
	mod := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	entry := func(p string, sites int) FileEntry {
		e := FileEntry{Renames: []Rename{{Old: "mcp__a.b__c", New: "mcp__a_b__c_x", Count: sites}}}
		e.Ref = store.Ref{Path: p, Kind: "qwen-session"}
		e.Backup = "/s/backups/0001-" + filepath.Base(p)
		e.Before = store.FileState{Size: 10, Mode: 0o640, ModTime: mod, SHA256: "ab"}
		e.After = store.FileState{Size: 12, Mode: 0o640, ModTime: mod, SHA256: "cd"}
		e.Warnings = []string{"w <1>"}
		for i := range sites {
			e.Sites = append(e.Sites, store.ByteEdit{At: int64(i * 40), Old: `"mcp__a.b__c"`, New: `"mcp__a_b__c_x"`})
		}
		return e
	}
	for _, tc := range []struct {
		name  string
		files []FileEntry
	}{
		{"none", []FileEntry{}},
		{"one", []FileEntry{entry("/x/a.jsonl", 1)}},
		{"three", []FileEntry{entry("/x/a.jsonl", 3), entry("/x/b.jsonl", 0), entry("/x/c.jsonl", 2)}},
	} {
		// raw: the entries given as json.Marshal's bytes (a journal line's "entry"), as
		// writeFinalManifest gives them; else decoded.
		for _, raw := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/raw=%v", tc.name, raw), func(t *testing.T) {
				m := &Manifest{RunID: "r", Created: mod, Command: "fix", Roots: []string{"/x"}, State: StateApplied,
					Files: tc.files, Skipped: []Skipped{{Ref: store.Ref{Path: "/x/z.jsonl"}, Reason: "in use", InUse: true}}, ToolNotes: []string{"n"}}
				want, err := marshalManifest(m)
				require.NoError(t, err)
				k := 0
				var buf bytes.Buffer
				type span struct {
					off int64
					b   []byte
				}
				var spans []span
				at := func(i int, off int64, b []byte) {
					assert.Equal(t, len(spans), i)
					spans = append(spans, span{off, bytes.Clone(b)})
				}
				sum, err := streamManifest(&buf, m, len(tc.files), func() (*FileEntry, []byte, error) {
					k++
					if raw {
						b, err := json.Marshal(&tc.files[k-1])
						return nil, b, err
					}
					return &tc.files[k-1], nil, nil
				}, at)
				require.NoError(t, err)
				got := buf.Bytes()
				copy(got[len(manifestSealPrefix):], sum)
				assert.Equal(t, string(want), string(got))
				// at names where each entry's bytes are: they decode to that entry.
				require.Len(t, spans, len(tc.files))
				for i, sp := range spans {
					assert.Equal(t, string(sp.b), string(got[sp.off:sp.off+int64(len(sp.b))]))
					var e FileEntry
					require.NoError(t, json.Unmarshal(sp.b, &e))
					assert.Equal(t, tc.files[i], e)
				}
			})
		}
	}
}

// A "done" line the journal could not take (a full disk) keeps its entry in memory: the
// manifest still records the store.
func TestManifestRecordsAStoreWhoseDoneLineFailed(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("1", "mcp__a.b__c"))
	state := filepath.Join(t.TempDir(), "state")
	renamed, failed := false, 0
	defer fileio.SetFaultHook(func(op, path string) error {
		if op == fileio.FaultRename && path == a {
			renamed = true
		}
		// Every journal write after the rename fails: the "done" line (and the temp-gone
		// lines, which are best effort).
		if renamed && op == fileio.FaultWrite && filepath.Base(path) == journalName {
			failed++
			return fmt.Errorf("no space left on device")
		}
		return nil
	})()
	res, err := Apply(context.Background(), Build(scanned(t, a), naming.Policy{}), ApplyOptions{StateDir: state, Workers: 1})
	require.NoError(t, err)
	require.Equal(t, 1, res.Files)
	assert.Positive(t, failed)
	m, err := ReadRun(res.Dir)
	require.NoError(t, err)
	assert.Equal(t, StateApplied, m.State)
	require.Len(t, m.Files, 1)
	assert.Equal(t, a, m.Files[0].Ref.Path)
	e, err := m.Entry(0)
	require.NoError(t, err)
	assert.NotEmpty(t, e.Sites)
}
