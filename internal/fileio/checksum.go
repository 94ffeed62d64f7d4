package fileio

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"strings"

	"github.com/zeebo/xxh3"

	"github.com/sessionfix/sessionfix/store"
)

// The checksums a file rewrite records in its Change (manifest version 4): XXH3-128 of the
// original (Change.Before.Fingerprint: the backup's check at undo) and of the new content
// (Change.After.Fingerprint: undo's "unchanged since the run" test), each spelled
// "xxh3-128:<32 hex digits>", both computed in the one streaming pass that copies the original
// into the temp file (rewriteFile).
//
// They guard against accidental change — an agent or an editor writing the session, a backup
// damaged on disk — not against an adversary: whoever can write the store can write anything
// there, and whoever can write the run directory (the backups and the manifest holding their
// checksums) is bounded by its seals and CheckRun (runlog/trust.go), not by the strength of
// these checksums. XXH3-128 is ~10× cheaper than SHA-256 (SIMD, no SHA-NI needed), and 128 bits
// make an accidental match negligible.
//
// History: versions 1 and 2 recorded the SHA-256 of both (Before.SHA256, After.SHA256);
// version 3 moved the "after" checksum to XXH3-128; version 4 the original's too, which was
// the largest CPU share of an apply left (issue 12 item 4). Every older spelling is still read:
// a recorded value names its algorithm by its field and prefix (BeforeSum, AfterSum, sumFor),
// not by the manifest's version, so an entry recovered from a journal (no version) or
// re-written by an older binary's undo (which labels the manifest with its own version) is
// checked with the algorithm it was recorded with. SQLite changes still record Before.SHA256
// (engine/sqlite hashes its backup copy itself).
const xxh3Prefix = "xxh3-128:"

// xxh128 is XXH3-128 as a hash.Hash whose Sum is the 16 bytes of the 128-bit value.
type xxh128 struct{ *xxh3.Hasher }

func (h xxh128) Sum(b []byte) []byte { s := h.Sum128().Bytes(); return append(b, s[:]...) }
func (h xxh128) Size() int           { return 16 }

// newXXH128 returns the hash of the checksums a rewrite records (xxh3Prefix).
func newXXH128() hash.Hash { return xxh128{xxh3.New()} }

// sumFor returns a new hash computing checksums spelled like want — "xxh3-128:<hex>",
// "crc32c:<hex>" or a bare hex SHA-256 digest — and the prefix formatSum puts before the hex
// digits.
func sumFor(want string) (hash.Hash, string) {
	switch {
	case strings.HasPrefix(want, xxh3Prefix):
		return newXXH128(), xxh3Prefix
	case strings.HasPrefix(want, "crc32c:"):
		return crc32.New(castagnoli), "crc32c:"
	default:
		return sha256.New(), ""
	}
}

func formatSum(h hash.Hash, prefix string) string { return prefix + hex.EncodeToString(h.Sum(nil)) }

// sumName names the algorithm of a checksum spelled like s (sumFor): "xxh3-128", "crc32c" or
// "sha256".
func sumName(s string) string {
	_, p := sumFor(s)
	if p == "" {
		return "sha256"
	}
	return strings.TrimSuffix(p, ":")
}

// AfterSum is the checksum a Change records for the content a run left: After.SHA256 (runs
// before manifest version 3), else After.Fingerprint; "" when neither is recorded.
func AfterSum(st store.FileState) string {
	if st.SHA256 != "" {
		return st.SHA256
	}
	return st.Fingerprint
}

// BeforeSum is the checksum a Change records for the original (the backup's first Before.Size
// bytes): Before.SHA256 (runs before manifest version 4, and SQLite changes), else
// Before.Fingerprint (a file rewrite since version 4, "xxh3-128:<hex>"); "" when neither is
// recorded. CheckChangeSum says whether it is one undo can check.
func BeforeSum(st store.FileState) string {
	if st.SHA256 != "" {
		return st.SHA256
	}
	return st.Fingerprint
}

// ErrBadChangeSum is wrapped by CheckChangeSum's errors.
var ErrBadChangeSum = errors.New("no usable checksum")

// CheckChangeSum checks that st (a Change's Before or After) records exactly one checksum of a
// kind a run writes: SHA256 as 64 lowercase hex digits, or Fingerprint as "xxh3-128:" and 32
// lowercase hex digits. The error (wrapping ErrBadChangeSum) says which member is missing,
// doubled, of an unknown algorithm or malformed, in the manifest's spelling ("sha256",
// "fingerprint").
func CheckChangeSum(st store.FileState) error {
	switch {
	case st.SHA256 != "" && st.Fingerprint != "":
		return fmt.Errorf("%w: both sha256 and fingerprint are recorded (a run records one)", ErrBadChangeSum)
	case st.SHA256 != "":
		if !isHex(st.SHA256, 64) {
			return fmt.Errorf("%w: sha256 %q is not 64 lowercase hex digits", ErrBadChangeSum, st.SHA256)
		}
	case st.Fingerprint != "":
		alg, digits, ok := strings.Cut(st.Fingerprint, ":")
		switch {
		case !ok || alg+":" != xxh3Prefix:
			return fmt.Errorf("%w: fingerprint %q is of an unknown algorithm (want xxh3-128:<32 hex digits>)", ErrBadChangeSum, st.Fingerprint)
		case !isHex(digits, 32):
			return fmt.Errorf("%w: fingerprint %q is not xxh3-128: and 32 lowercase hex digits", ErrBadChangeSum, st.Fingerprint)
		}
	default:
		return fmt.Errorf("%w: neither sha256 nor fingerprint is recorded", ErrBadChangeSum)
	}
	return nil
}

// isHex reports whether s is n lowercase hex digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// sums computes, in one pass over what is written to it, the checksums spelled like each of
// wants (sumFor), one hash per algorithm however many wants share it; an empty want asks for
// nothing (its get is "").
type sums struct {
	io.Writer
	hs       []hash.Hash
	prefixes []string
	of       []int // wants[i]'s hash is hs[of[i]], -1 for an empty want
}

func newSums(wants ...string) *sums {
	s := &sums{}
	ws := []io.Writer{io.Discard}
	for _, w := range wants {
		if w == "" {
			s.of = append(s.of, -1)
			continue
		}
		h, p := sumFor(w)
		k := -1
		for j, q := range s.prefixes {
			if q == p {
				k = j
			}
		}
		if k < 0 {
			k = len(s.hs)
			s.hs, s.prefixes, ws = append(s.hs, h), append(s.prefixes, p), append(ws, h)
		}
		s.of = append(s.of, k)
	}
	s.Writer = io.MultiWriter(ws[1:]...)
	if len(ws) <= 2 {
		s.Writer = ws[len(ws)-1]
	}
	return s
}

// get returns the i-th want's checksum of what was written ("" for an empty want).
func (s *sums) get(i int) string {
	if s.of[i] < 0 {
		return ""
	}
	return formatSum(s.hs[s.of[i]], s.prefixes[s.of[i]])
}

// hashFileAs returns the checksums of path's content spelled like each of wants (sumFor; "" for
// an empty want), in one read.
func hashFileAs(path string, wants ...string) ([]string, error) {
	f, _, err := OpenStore(path, store.FileID{})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := newSums(wants...)
	if _, err := io.CopyBuffer(s, f, make([]byte, copyBufSize)); err != nil {
		return nil, err
	}
	out := make([]string, len(wants))
	for i := range wants {
		out[i] = s.get(i)
	}
	return out, nil
}
