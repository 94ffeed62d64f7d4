package fileio

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"strings"

	"github.com/zeebo/xxh3"

	"github.com/sessionfix/sessionfix/store"
)

// The checksum a rewrite records for the file it leaves (Change.After.Fingerprint, manifest
// version 3): XXH3-128 of the new content, "xxh3-128:<32 hex digits>". It is undo's "unchanged
// since the run" test (RestoreFile), against accidental change (an agent or an editor writing
// the session), not an adversary: whoever can write the store can write anything there, and
// whoever can write the run directory is bounded by its seals and CheckRun. It replaced the
// SHA-256 of the new content (After.SHA256, versions 1 and 2, still read) because it is ~10×
// cheaper: SHA-256 over the original (Before.SHA256, the backup's check) and over the new
// content were the largest CPU share of an apply (issue 12 item 4). The original keeps its
// SHA-256.
const afterPrefix = "xxh3-128:"

// xxh128 is XXH3-128 as a hash.Hash whose Sum is the 16 bytes of the 128-bit value.
type xxh128 struct{ *xxh3.Hasher }

func (h xxh128) Sum(b []byte) []byte { s := h.Sum128().Bytes(); return append(b, s[:]...) }
func (h xxh128) Size() int           { return 16 }

// newAfterSum returns the hash of a rewrite's "after" checksum.
func newAfterSum() hash.Hash { return xxh128{xxh3.New()} }

// sumFor returns a new hash computing checksums spelled like want — "xxh3-128:<hex>",
// "crc32c:<hex>" or a bare hex SHA-256 digest — and the prefix formatSum puts before the hex
// digits.
func sumFor(want string) (hash.Hash, string) {
	switch {
	case strings.HasPrefix(want, afterPrefix):
		return newAfterSum(), afterPrefix
	case strings.HasPrefix(want, "crc32c:"):
		return crc32.New(castagnoli), "crc32c:"
	default:
		return sha256.New(), ""
	}
}

func formatSum(h hash.Hash, prefix string) string { return prefix + hex.EncodeToString(h.Sum(nil)) }

// AfterSum is the checksum a Change records for the content a run left: After.SHA256 (runs
// before manifest version 3), else After.Fingerprint; "" when neither is recorded.
func AfterSum(st store.FileState) string {
	if st.SHA256 != "" {
		return st.SHA256
	}
	return st.Fingerprint
}

// hashFileAnd returns the hex SHA-256 of path's content and, in the same read, its checksum
// spelled like want (sumFor); the two are equal for a SHA-256 want.
func hashFileAnd(path, want string) (sha, other string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sh := sha256.New()
	oh, prefix := sumFor(want)
	var w io.Writer = io.MultiWriter(sh, oh)
	if prefix == "" {
		w, oh = sh, nil
	}
	if _, err := io.CopyBuffer(w, f, make([]byte, copyBufSize)); err != nil {
		return "", "", err
	}
	sha = hex.EncodeToString(sh.Sum(nil))
	if oh == nil {
		return sha, sha, nil
	}
	return sha, formatSum(oh, prefix), nil
}
