package rewrite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/runlog"
)

// What these tests read and edit in a run directory, as docs/apply-and-undo.md describes it (runlog
// writes it; these tests check the files, not runlog's code).
const (
	manifestName = "manifest.json"
	journalName  = "journal.jsonl"
	backupsDir   = "backups"
	runsDir      = "runs"
)

// The seal of a run's manifest and journal lines: the first member holds "sha256:" and the hex
// SHA-256 of the bytes with those 64 digits as zeros.
var (
	manifestSealPrefix = []byte("{\n  \"checksum\": \"sha256:")
	journalSealPrefix  = []byte("{\"sum\":\"sha256:")
	zeroSum            = bytes.Repeat([]byte("0"), 64)
	sealPlaceholder    = runlog.SealPlaceholder
)

// seal fills the 64 zero digits after prefix at the start of b with the SHA-256 of b.
func seal(b, prefix []byte) {
	sum := sha256.Sum256(b)
	hex.Encode(b[len(prefix):len(prefix)+64], sum[:])
}

// writeManifest replaces manifest.json of the run directory dir with m, sealed as a run
// writes it (the state a run killed before its final manifest leaves, when m says so).
func writeManifest(t *testing.T, dir string, m *runlog.Manifest) {
	t.Helper()
	c := *m
	c.Checksum = sealPlaceholder
	b, err := json.MarshalIndent(&c, "", "  ")
	require.NoError(t, err)
	b = append(b, '\n')
	require.True(t, runlog.SealDocument(b))
	require.NoError(t, os.WriteFile(filepath.Join(dir, manifestName), b, 0o600))
}

// undo reads, checks and undoes the run in dir as sessionfix undo does (runlog.ReadRun,
// runlog.CheckRun, runlog.UndoRun).
func undo(ctx context.Context, dir string, open runlog.Opener, force bool, now func() time.Time) ([]runlog.UndoOutcome, *runlog.Manifest, error) {
	m, err := runlog.ReadRun(dir)
	if err != nil {
		return nil, nil, err
	}
	if err := runlog.CheckRun(dir, m); err != nil {
		return nil, m, err
	}
	return runlog.UndoRun(ctx, dir, m, open, force, now)
}
