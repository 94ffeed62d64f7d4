// Package all lists every store backend in one place (no self-registration): Detect picks the
// backend of a file found by a walk, Open reopens a store recorded in a run manifest.
//
// all imports the store backends and nothing above them.
package all

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/jsonl"
)

// HeadSize is how many leading bytes Detect wants to see.
const HeadSize = 4096

// Detection is the verdict on one file.
type Detection struct {
	// Store is the backend to read it with, nil when the file is not a store.
	Store store.Store
	// Unsupported says why a file that looks like a store cannot be read ("zstd-compressed").
	Unsupported string
}

var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// Detect picks the backend for path from its name and head (its first bytes, up to HeadSize).
func Detect(path string, head []byte) Detection {
	if strings.HasSuffix(path, ".zst") || bytes.HasPrefix(head, zstdMagic) {
		if strings.Contains(path, ".json") {
			return Detection{Unsupported: "zstd-compressed store: reported, not parsed"}
		}
		return Detection{}
	}
	first := head
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	if p := jsonl.Detect(path, bytes.TrimPrefix(first, []byte("\xEF\xBB\xBF"))); p != nil {
		return Detection{Store: jsonl.Open(path, p)}
	}
	return Detection{}
}

// ReadHead returns up to HeadSize leading bytes of the file at path.
func ReadHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, HeadSize)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return buf[:n], nil
}

// Open returns the store recorded as ref (for undo). It does not touch the store.
func Open(ref store.Ref) (store.Store, error) {
	if p := jsonl.ProfileByKind(ref.Kind); p != nil {
		return jsonl.Open(ref.Path, p), nil
	}
	return nil, fmt.Errorf("open %s: unknown store kind %q", ref.Path, ref.Kind)
}
