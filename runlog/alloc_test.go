package runlog

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// denseEntry is the entry of a store like a session of make bench's dense corpus: inline sites
// of ~14 KB (store.Change.SiteData), a few renames.
func denseEntry() *FileEntry {
	sites := bytes.Repeat([]byte{3, 1, 7, 2, 0, 9, 250, 1}, 14<<10/8)
	return &FileEntry{
		Change: store.Change{Ref: store.Ref{Path: "/home/u/.qwen/projects/p/chats/s.jsonl", Kind: "qwen-session"},
			Backup: "/state/runs/r/backups/0001-s.jsonl", BackupLink: true, Edits: 6300, SiteData: sites,
			Before: store.FileState{Size: 2 << 20, Fingerprint: "xxh3-128:" + strings.Repeat("0", 32)},
			After:  store.FileState{Size: 2<<20 + 40000, Fingerprint: "xxh3-128:" + strings.Repeat("1", 32)}},
		Renames: []Rename{{Old: "mcp__lit__literature.search", New: "mcp__lit__literature_search_0x1", Count: 6300}},
	}
}

// A journal line is json.Marshal's bytes of the entry, sealed, and a newline, whichever way it
// is encoded.
func TestEncodeJournalLineIsMarshalsLine(t *testing.T) {
	e := journalEntry{Event: "commit", Entry: denseEntry(), Path: "/home/u/.qwen/projects/p/chats/s.jsonl", Reason: "<&>"}
	want := e
	want.Sum = sealPlaceholder
	m, err := json.Marshal(want)
	require.NoError(t, err)
	seal(m, journalSealPrefix)
	var buf bytes.Buffer
	buf.WriteString("left over from the line before")
	got, err := encodeJournalLine(&buf, e)
	require.NoError(t, err)
	assert.Equal(t, string(append(m, '\n')), string(got))
	sealed, ok := checkSeal(bytes.TrimSuffix(got, []byte("\n")), journalSealPrefix)
	assert.True(t, sealed && ok)
}

// Writing a journal line allocates less than the line: it is encoded into a buffer the journal
// keeps (lineBufs), not copied out by json.Marshal (red before: 20.9 KB for a line of 19.8 KB;
// the journal of fix --apply on make bench's dense corpus is 3.4 MB).
func TestJournalLineAllocatesLessThanTheLine(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates for its own bookkeeping")
	}
	j, err := openJournal(filepath.Join(t.TempDir(), journalName))
	require.NoError(t, err)
	defer j.close()
	e := journalEntry{Event: "done", Entry: denseEntry(), Path: "/home/u/.qwen/projects/p/chats/s.jsonl"}
	_, n, err := j.write(e, false)
	require.NoError(t, err)
	const lines = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range lines {
		_, _, err := j.write(e, false)
		require.NoError(t, err)
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / lines
	t.Logf("%d bytes allocated per line of %d", per, n)
	assert.Less(t, per, uint64(n/2), "bytes allocated per journal line")
}

// A manifest entry is indented into a buffer grown once: json.Indent grows its destination by
// twice its source, and a buffer grown by less first was allocated twice (red before: 98 KB
// for an entry of 19.8 KB, now 41 KB).
func TestIndentEntryAllocatesOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates for its own bookkeeping")
	}
	p := filepath.Join(t.TempDir(), journalName)
	j, err := openJournal(p)
	require.NoError(t, err)
	defer j.close()
	e := denseEntry()
	off, n, err := j.write(journalEntry{Event: "done", Entry: e, Path: e.Ref.Path}, false)
	require.NoError(t, err)
	jr, err := os.Open(p)
	require.NoError(t, err)
	defer jr.Close()
	f := fileRef{path: e.Ref.Path, off: off, n: n}
	line := make([]byte, n)
	ind, _, err := indentEntry(jr, f, line)
	require.NoError(t, err)
	const rounds = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range rounds {
		_, _, err := indentEntry(jr, f, line)
		require.NoError(t, err)
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / rounds
	t.Logf("%d bytes allocated per entry of %d (%d indented)", per, n, len(ind))
	assert.Less(t, per, uint64(3*n), "bytes allocated per indented entry")
}
