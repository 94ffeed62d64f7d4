package fileio

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// bigOriginal is a file longer than several copy buffers, so a checksum taken over the wrong
// stream, part of it or a lost buffer shows.
func bigOriginal(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	p := filepath.Join(dir, "s.jsonl")
	var b bytes.Buffer
	for i := range 40_000 {
		fmt.Fprintf(&b, "abc line %d\n", i)
	}
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o600))
	return p, b.Bytes()
}

// The checksum a rewrite records for the original (manifest version 4) is its XXH3-128 in
// Before.Fingerprint, computed here with the library; Before.SHA256 is no longer recorded —
// whichever checksum the caller's want carries (the scan's CRC-32C, a SHA-256, an XXH3-128)
// is still checked against what was read, and a mismatch refuses the file as changed.
func TestRewriteFileRecordsTheOriginalsXXH3(t *testing.T) {
	for _, kind := range []string{"crc32c", "sha256", "xxh3-128", "none"} {
		for _, wrong := range []bool{false, true} {
			if kind == "none" && wrong {
				continue
			}
			t.Run(fmt.Sprintf("%s/wrong=%v", kind, wrong), func(t *testing.T) {
				dir := t.TempDir()
				p, orig := bigOriginal(t, dir)
				want, err := StatFile(p)
				require.NoError(t, err)
				switch kind {
				case "crc32c":
					want.Fingerprint = fmt.Sprintf("crc32c:%08x", crc32.Checksum(orig, castagnoli))
				case "sha256":
					s := sha256.Sum256(orig)
					want.SHA256 = hex.EncodeToString(s[:])
				case "xxh3-128":
					want.Fingerprint = xxh128Text(orig)
				}
				if wrong {
					want.SHA256, want.Fingerprint = flipLast(want.SHA256), flipLast(want.Fingerprint)
				}
				ch, err := RewriteFile(context.Background(), p, want, upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1")})
				if wrong {
					var iu *store.InUseError
					require.ErrorAs(t, err, &iu)
					assert.Contains(t, iu.Reason, "content changed since it was scanned")
					got, _ := os.ReadFile(p)
					assert.Equal(t, orig, got)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, xxh128Text(orig), ch.Before.Fingerprint)
				assert.Empty(t, ch.Before.SHA256)
				assert.Equal(t, int64(len(orig)), ch.Before.Size)
				assert.Equal(t, xxh128Text(bytes.ToUpper(orig)), ch.After.Fingerprint)
				assert.NoError(t, CheckChangeSum(ch.Before))
			})
		}
	}
}

// flipLast changes the last hex digit of a checksum ("" stays "").
func flipLast(s string) string {
	if s == "" {
		return s
	}
	c := byte('0')
	if s[len(s)-1] == '0' {
		c = '1'
	}
	return s[:len(s)-1] + string(c)
}

// Undo checks the backup with the checksum the Change records for the original: XXH3-128
// (Before.Fingerprint, version 4) or SHA-256 (Before.SHA256, versions 1 to 3). An intact backup
// is restored byte for byte; one with a single byte changed (same size) is refused as damaged,
// naming the algorithm, and the file keeps the run's content — with --force too.
func TestRestoreFileChecksTheBackupWithTheRecordedChecksum(t *testing.T) {
	for _, alg := range []string{"xxh3-128", "sha256"} {
		for _, damaged := range []bool{false, true} {
			for _, force := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/damaged=%v/force=%v", alg, damaged, force), func(t *testing.T) {
					dir := t.TempDir()
					p, orig := bigOriginal(t, dir)
					ch, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1")})
					require.NoError(t, err)
					if alg == "sha256" {
						s := sha256.Sum256(orig)
						ch.Before.SHA256, ch.Before.Fingerprint = hex.EncodeToString(s[:]), ""
					}
					after, _ := os.ReadFile(p)
					if damaged {
						b := bytes.Clone(orig)
						b[300_000] ^= 1
						require.NoError(t, os.Remove(ch.Backup)) // a link to the original inode
						require.NoError(t, os.WriteFile(ch.Backup, b, 0o600))
					}
					err = RestoreFile(context.Background(), p, ch, force)
					got, _ := os.ReadFile(p)
					if damaged {
						require.Error(t, err)
						assert.Contains(t, err.Error(), fmt.Sprintf("backup %s is damaged: %s of its first %d bytes", ch.Backup, alg, len(orig)))
						assert.Equal(t, after, got, "the file keeps the run's content")
						return
					}
					require.NoError(t, err)
					assert.Equal(t, orig, got, "restored byte for byte")
				})
			}
		}
	}
}

// A Change whose record of the original has no checksum undo can check (none, two, an unknown
// or weaker algorithm, a wrong length) is refused before anything is read or written, with
// --force too (CheckChangeSum; runlog.CheckRun refuses such a run as a whole first).
func TestRestoreFileRefusesAChangeWithoutAUsableChecksum(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	cases := []struct {
		sha, fp, want string
	}{
		{"", "", "neither sha256 nor fingerprint is recorded"},
		{sha, "xxh3-128:" + strings.Repeat("0", 32), "both sha256 and fingerprint are recorded"},
		{"", "crc32c:0badf00d", `fingerprint "crc32c:0badf00d" is of an unknown algorithm`},
		{"", "sha1:" + strings.Repeat("0", 40), "is of an unknown algorithm"},
		{"", strings.Repeat("0", 32), "is of an unknown algorithm"},
		{"", "xxh3-128:" + strings.Repeat("0", 31), "is not xxh3-128: and 32 lowercase hex digits"},
		{"", "xxh3-128:" + strings.Repeat("A", 32), "is not xxh3-128: and 32 lowercase hex digits"},
		{"", "xxh3-128:" + strings.Repeat("g", 32), "is not xxh3-128: and 32 lowercase hex digits"},
		{sha[:62], "", "is not 64 lowercase hex digits"},
		{strings.ToUpper(sha), "", "is not 64 lowercase hex digits"},
	}
	for _, tc := range cases {
		for _, force := range []bool{false, true} {
			t.Run(fmt.Sprintf("%q/%q/force=%v", tc.sha, tc.fp, force), func(t *testing.T) {
				dir := t.TempDir()
				p, _ := bigOriginal(t, dir)
				ch, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1")})
				require.NoError(t, err)
				after, _ := os.ReadFile(p)
				ch.Before.SHA256, ch.Before.Fingerprint = tc.sha, tc.fp
				err = RestoreFile(context.Background(), p, ch, force)
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrBadChangeSum), "%v", err)
				assert.Contains(t, err.Error(), tc.want)
				assert.Contains(t, err.Error(), p)
				got, _ := os.ReadFile(p)
				assert.Equal(t, after, got)
				_, err = os.Stat(ch.Backup + ".before-undo")
				assert.ErrorIs(t, err, os.ErrNotExist, "nothing written")
			})
		}
	}
	assert.NoError(t, CheckChangeSum(store.FileState{SHA256: sha}))
	assert.NoError(t, CheckChangeSum(store.FileState{Fingerprint: "xxh3-128:" + strings.Repeat("0f", 16)}))
}
