package runlog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// The final manifest is streamed from the journal: byte for byte what marshalManifest writes
// for the same manifest held whole (entries in path order, the seal over every byte), and the
// run keeps no entry in memory.
func TestStreamedManifestIsTheMarshalledManifest(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(t.TempDir(), "state")
	now := func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }
	r := New(Options{StateDir: state, Now: now, Command: `test "files": [] <cmd>`, Roots: []string{dir}})
	// Rewritten out of path order; names with characters JSON escapes (<, &).
	for _, n := range []string{"c", "a", "e", "b", "d"} {
		ref := store.Ref{Path: filepath.Join(dir, n+".jsonl"), Kind: "qwen-session"}
		old, nu := "mcp__"+n+".srv__t<x>&y", "mcp__"+n+"_srv__t_x__y"
		ch, err := r.Rewrite(context.Background(), ref, []Rename{{Old: old, New: nu, Count: 2}}, 2,
			func(_ context.Context, aopt store.ApplyOptions) (*store.Change, error) {
				ch := &store.Change{Backup: aopt.BackupPath,
					Before: store.FileState{Size: 100, Mode: 0o600, ModTime: now(), SHA256: strings.Repeat("a", 64)},
					After:  store.FileState{Size: 104, Mode: 0o600, ModTime: now(), Fingerprint: "xxh3-128:" + strings.Repeat("b", 32)},
					Sites:  []store.ByteEdit{{At: 10, Old: `"` + old + `"`, New: `"` + nu + `"`}, {At: 60, Old: `"` + old + `"`, New: `"` + nu + `"`}}}
				return ch, aopt.BeforeCommit(ch)
			})
		require.NoError(t, err)
		require.NotNil(t, ch)
	}
	res, err := r.Finish(nil)
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
		assert.Nil(t, m.Files[i].SiteData, "ReadRun keeps entries light")
		e, err := m.Entry(i)
		require.NoError(t, err)
		sites, err := e.AllSites()
		require.NoError(t, err)
		require.Len(t, sites, 2)
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

// doneEntry takes the entry member out of a "done" line by its bytes: exactly what json.Marshal
// wrote for the entry, for any store path (quotes, HTML characters, non-ASCII, a path that
// itself contains `,"path":`), with or without a reason; anything else is refused.
func TestDoneEntryIsTheMarshalledEntry(t *testing.T) {
	for _, p := range []string{"/h/a.jsonl", `/h/q"u<o>&te.jsonl`, "/h/ünï/会话.jsonl", `/h/x,"path":"y.jsonl`} {
		e := &FileEntry{Change: store.Change{Ref: store.Ref{Path: p, Kind: "qwen-session"}, Backup: "/s/b", Edits: 2,
			Sites: []store.ByteEdit{{At: 5, Old: `"mcp__a.b__c"`, New: `"mcp__a_b__c_x"`}}}, Renames: []Rename{{Old: "o", New: "n", Count: 1}}}
		want, err := json.Marshal(e)
		require.NoError(t, err)
		for _, reason := range []string{"", `late writer: "x" appended ,"path":"/h/a.jsonl"`} {
			line, err := marshalJournalLine(journalEntry{Event: "done", Path: p, Entry: e, Reason: reason})
			require.NoError(t, err)
			got, err := doneEntry(line, p)
			require.NoError(t, err, "%s", line)
			assert.Equal(t, string(want), string(got))

			_, err = doneEntry(line, p+"x")
			assert.Error(t, err, "the done line of another store")
			_, err = doneEntry(line[:len(line)-3], p)
			assert.Error(t, err, "a cut line")
		}
		commit, err := marshalJournalLine(journalEntry{Event: "commit", Entry: e})
		require.NoError(t, err)
		_, err = doneEntry(commit, p)
		assert.Error(t, err, "a commit line")
		// The line names p, its entry another store.
		other := *e
		other.Ref.Path = "/h/other.jsonl"
		line, err := marshalJournalLine(journalEntry{Event: "done", Path: p, Entry: &other})
		require.NoError(t, err)
		_, err = doneEntry(line, p)
		assert.Error(t, err, "an entry of another store under p's line")
	}
}

// The entries are read and indented ahead by two goroutines, in order; a journal line that is
// not its store's entry stops the manifest with an error naming the store, and every reader
// ends (no goroutine left blocked).
func TestFinalEntriesInOrderAndStopOnABadLine(t *testing.T) {
	jr, files, want := doneJournal(t, 7)
	s := finalEntries(jr, files, 2)
	for k := range files {
		b, err := s.next()
		require.NoError(t, err)
		assert.Equal(t, string(want[k]), string(b), "entry %d", k)
	}
	s.stop()

	bad := append([]fileRef(nil), files...)
	bad[4].path = "/h/elsewhere.jsonl"
	s = finalEntries(jr, bad, 2)
	for k := range 4 {
		_, err := s.next()
		require.NoError(t, err, "entry %d", k)
	}
	_, err := s.next()
	assert.ErrorContains(t, err, "is not the entry of /h/elsewhere.jsonl")
	s.stop() // returns: the other reader is waiting to send entry 5, or done
}

// doneJournal returns a journal of n "done" lines (stores /h/<i>.jsonl, entry i with Edits i),
// where each line is (the fileRefs) and each entry as the final manifest indents it.
func doneJournal(t *testing.T, n int) (*bytes.Reader, []fileRef, [][]byte) {
	t.Helper()
	var journal bytes.Buffer
	var files []fileRef
	var want [][]byte
	for i := range n {
		p := fmt.Sprintf("/h/%d.jsonl", i)
		e := &FileEntry{Change: store.Change{Ref: store.Ref{Path: p, Kind: "qwen-session"}, Edits: i}}
		line, err := marshalJournalLine(journalEntry{Event: "done", Path: p, Entry: e})
		require.NoError(t, err)
		files = append(files, fileRef{path: p, off: int64(journal.Len()), n: len(line)})
		journal.Write(line)
		b, err := json.MarshalIndent(e, "    ", "  ")
		require.NoError(t, err)
		want = append(want, b)
	}
	return bytes.NewReader(journal.Bytes()), files, want
}

// stop ends every reader of finalEntries whatever the writer took before it stopped: nothing
// (the manifest's temp file could not be created: a full disk), part of the entries up to a
// bad line (the other reader has more ready than its channel holds), every entry; for 0, 1
// and 20 stores. In a synctest bubble a reader left blocked on its send (or a stop waiting on
// one) is a deadlock the test reports, not a hang. (TestFinalEntriesInOrderAndStopOnABadLine
// stays green with the readers' quit case removed: over 7 entries the other reader's channel
// holds all it has left.)
func TestFinalEntriesStopEndsEveryReader(t *testing.T) {
	for _, c := range []struct{ n, take int }{{0, 0}, {1, 0}, {1, 1}, {20, 0}, {20, 1}, {20, 20}} {
		t.Run(fmt.Sprintf("%d-entries/writer-takes-%d", c.n, c.take), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				jr, files, want := doneJournal(t, c.n)
				s := finalEntries(jr, files, 2)
				for k := range c.take {
					b, err := s.next()
					require.NoError(t, err)
					assert.Equal(t, string(want[k]), string(b), "entry %d", k)
				}
				s.stop()
			})
		})
	}
	t.Run("bad-line-early", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			jr, files, _ := doneJournal(t, 20)
			files[2].path = "/h/elsewhere.jsonl" // reader 0's second entry; reader 1 has 9 more
			s := finalEntries(jr, files, 2)
			for k := range 2 {
				_, err := s.next()
				require.NoError(t, err, "entry %d", k)
			}
			_, err := s.next()
			assert.ErrorContains(t, err, "is not the entry of /h/elsewhere.jsonl")
			s.stop()
		})
	})
}

// countingReader counts the journal lines finalEntries' readers read.
type countingReader struct {
	io.ReaderAt
	reads atomic.Int32
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads.Add(1)
	return c.ReaderAt.ReadAt(p, off)
}

// finalEntries holds at most entryBytes of journal lines ahead of the writer, or one entry
// when a single one is larger: with a limit below every line, entry k is read only once the
// writer is done with entry k-1 (asked for the next), while without a bound that matters (the
// default 8 MiB, lines of ~200 bytes) the two readers have read 7 of the 10 entries (entry
// 0, 2 in each channel, one more each waiting to be sent). Entries stay in order; stop ends
// readers waiting for the gate.
func TestFinalEntriesBoundedByBytes(t *testing.T) {
	for _, c := range []struct {
		limit int64
		ahead int32 // lines read while the writer holds entry 0
	}{{1, 1}, {8 << 20, 7}} {
		t.Run(fmt.Sprint(c.limit), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				defer func(v int64) { entryBytes = v }(entryBytes)
				entryBytes = c.limit
				jr, files, want := doneJournal(t, 10)
				cr := &countingReader{ReaderAt: jr}
				s := finalEntries(cr, files, 2)
				b, err := s.next()
				require.NoError(t, err)
				assert.Equal(t, string(want[0]), string(b))
				synctest.Wait()
				assert.Equal(t, c.ahead, cr.reads.Load(), "lines read while the writer holds entry 0")
				for k := 1; k < 5; k++ {
					b, err := s.next()
					require.NoError(t, err)
					assert.Equal(t, string(want[k]), string(b), "entry %d", k)
				}
				s.stop()
			})
		})
	}
}
