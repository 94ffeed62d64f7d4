package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A middle-truncated dotted name kept because its file must not be written (invalid UTF-8 in
// another line) is not "kept by --keep-truncated" when that flag was not given: the kept line
// gives the reason of a file that is not rewritten (review5: the line advised "run without it").
func TestKeptTruncatedDottedWhyWithoutKeepTruncated(t *testing.T) {
	e := newCodexEnv(t, nil)
	dir := fixtureCopy(t)
	path := filepath.Join(dir, "projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := bytes.SplitAfter(b, []byte("\n"))
	lines[3] = bytes.Replace(lines[3], []byte(`"type"`), []byte("\"t\xff\xfepe\""), 1)
	require.NoError(t, os.WriteFile(path, bytes.Join(lines, nil), 0o640))

	assert.Equal(t, exitPartial, e.run(t, "scan", dir))
	out := e.out.String()
	assert.Contains(t, out, "legacy-truncated-dotted (not rewritable here: a key clash or a file that must not be written; see the notes and warnings)")
	assert.NotContains(t, out, "kept by --keep-truncated")

	// Given --keep-truncated, the flag is the reason.
	e.run(t, "scan", "--keep-truncated", dir)
	assert.Contains(t, e.out.String(), "legacy-truncated-dotted (kept by --keep-truncated; fix: run without it)")
}
