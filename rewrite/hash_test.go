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

	"github.com/sessionfix/sessionfix/store/all"
)

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// The manifest's hashes are what undo trusts: Before.SHA256 must be the SHA-256 of the original
// (and of the backup's first Before.Size bytes), After.SHA256 that of the file the run left. The
// sessions are longer than one copy buffer and their first edit is far from the start, so a hash
// taken over the wrong stream, a shared prefix or a lost buffer shows. A backup with one byte
// flipped (same size) is refused by undo, and the file keeps the run's content.
func TestManifestHashesAreSHA256OfTheFiles(t *testing.T) {
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
	orig := map[string][]byte{}
	for _, p := range []string{a, b} {
		orig[p], _ = os.ReadFile(p)
	}
	state := filepath.Join(t.TempDir(), "state")
	now := func() time.Time { return time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC) }
	res, err := Apply(context.Background(), Build(scanned(t, a, b), Policy{}), ApplyOptions{StateDir: state, Now: now, Command: "test"})
	require.NoError(t, err)
	m, err := ReadRun(res.Dir)
	require.NoError(t, err)
	require.Len(t, m.Files, 2)
	for _, f := range m.Files {
		p := f.Ref.Path
		now, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NotEqual(t, orig[p], now, "%s was rewritten", p)
		assert.Equal(t, int64(len(orig[p])), f.Before.Size)
		assert.Equal(t, sha256Hex(orig[p]), f.Before.SHA256, "%s: Before.SHA256 is the original's", p)
		bk, err := os.ReadFile(f.Backup)
		require.NoError(t, err)
		require.GreaterOrEqual(t, int64(len(bk)), f.Before.Size)
		assert.Equal(t, f.Before.SHA256, sha256Hex(bk[:f.Before.Size]), "%s: the backup hashes to Before.SHA256", p)
		assert.Equal(t, int64(len(now)), f.After.Size)
		assert.Equal(t, sha256Hex(now), f.After.SHA256, "%s: After.SHA256 is the new file's", p)
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
	outs, _, err := Undo(context.Background(), res.Dir, all.Open, false, now)
	require.NoError(t, err)
	require.Len(t, outs, 2)
	for _, o := range outs {
		if o.Ref.Path == a {
			require.Error(t, o.Err)
			assert.Contains(t, o.Err.Error(), "damaged")
		} else {
			assert.NoError(t, o.Err)
		}
	}
	got, _ := os.ReadFile(a)
	assert.Equal(t, newA, got, "a keeps the run's content")
	got, _ = os.ReadFile(b)
	assert.Equal(t, orig[b], got, "b restored")
}
