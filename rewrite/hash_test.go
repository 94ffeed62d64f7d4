package rewrite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/store"
)

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// xxh128Text is a checksum as manifest version 4 records it (Before and After.Fingerprint),
// computed with the library directly.
func xxh128Text(b []byte) string {
	x := xxh3.Hash128(b).Bytes()
	return "xxh3-128:" + hex.EncodeToString(x[:])
}

// The manifest's checksums are what undo trusts (manifest version 4): the original's
// (Before.Fingerprint, XXH3-128 since version 4; Before.SHA256 no longer written) must be that
// of the original and of the backup's first Before.Size bytes, the "after" checksum
// (After.Fingerprint, XXH3-128 since version 3) that of the file the run left — both computed
// here with the library directly. The sessions are longer than one copy buffer and their first
// edit is far from the start, so a hash taken over the wrong stream, a shared prefix or a lost
// buffer shows. A backup with one byte flipped (same size) is refused by undo as damaged, and
// the file keeps the run's content; a session with one byte changed since the run (same size)
// is refused as changed; the third is restored byte for byte.
func TestManifestChecksumsAreThoseOfTheFiles(t *testing.T) {
	dir := t.TempDir()
	pad := `{"message":{"parts":[{"text":"` + strings.Repeat("p", 4000) + `"}]}}`
	var lines []string
	for i := range 200 {
		lines = append(lines, pad)
		if i%50 == 49 {
			lines = append(lines, call("c"+string(rune('a'+i/50)), "mcp__a.b__c"))
		}
	}
	a := writeSession(t, dir, "a.jsonl", lines...)
	b := writeSession(t, dir, "b.jsonl", append(lines[:120:120], resp("r", "mcp__x.y__z"))...)
	c := writeSession(t, dir, "c.jsonl", append(lines[:60:60], call("q", "mcp__u.v__w"))...)
	orig := map[string][]byte{}
	for _, p := range []string{a, b, c} {
		orig[p], _ = os.ReadFile(p)
	}
	state := filepath.Join(t.TempDir(), "state")
	now := func() time.Time { return time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC) }
	res, err := Apply(context.Background(), Build(scanned(t, a, b, c), naming.Policy{}), ApplyOptions{StateDir: state, Now: now, Command: "test"})
	require.NoError(t, err)
	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	assert.Equal(t, runlog.ManifestVersion, m.Version)
	require.Len(t, m.Files, 3)
	for _, f := range m.Files {
		p := f.Ref.Path
		now, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NotEqual(t, orig[p], now, "%s was rewritten", p)
		assert.Equal(t, int64(len(orig[p])), f.Before.Size)
		assert.Empty(t, f.Before.SHA256, "%s: version 4 records no SHA-256 of the original", p)
		assert.Equal(t, xxh128Text(orig[p]), f.Before.Fingerprint, "%s: Before.Fingerprint is the original's XXH3-128", p)
		bk, err := os.ReadFile(f.Backup)
		require.NoError(t, err)
		require.GreaterOrEqual(t, int64(len(bk)), f.Before.Size)
		assert.Equal(t, f.Before.Fingerprint, xxh128Text(bk[:f.Before.Size]), "%s: the backup has the original's checksum", p)
		assert.Equal(t, int64(len(now)), f.After.Size)
		assert.Empty(t, f.After.SHA256)
		assert.Equal(t, xxh128Text(now), f.After.Fingerprint, "%s: the after checksum is the new file's", p)
	}

	// One byte of a's backup flipped, size kept: undo refuses a, restores b.
	var bkA string
	for _, f := range m.Files {
		if f.Ref.Path == a {
			bkA = f.Backup
		}
	}
	fh, err := os.OpenFile(bkA, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = fh.WriteAt([]byte("q"), 100000)
	require.NoError(t, err)
	require.NoError(t, fh.Close())
	newA, _ := os.ReadFile(a)
	// One byte of c changed since the run, size and the edited names kept.
	newC, _ := os.ReadFile(c)
	newC[5000] ^= 1
	require.NoError(t, os.WriteFile(c, newC, 0o600))
	outs, _, err := undo(context.Background(), res.Dir, all.Open, false, now)
	require.NoError(t, err)
	require.Len(t, outs, 3)
	for _, o := range outs {
		switch o.Ref.Path {
		case a:
			require.Error(t, o.Err)
			assert.Contains(t, o.Err.Error(), "damaged")
		case c:
			require.ErrorIs(t, o.Err, store.ErrChangedSinceRun)
		default:
			assert.NoError(t, o.Err)
		}
	}
	got, _ := os.ReadFile(c)
	assert.Equal(t, newC, got, "c keeps its later change")
	got, _ = os.ReadFile(a)
	assert.Equal(t, newA, got, "a keeps the run's content")
	got, _ = os.ReadFile(b)
	assert.Equal(t, orig[b], got, "b restored")
}
