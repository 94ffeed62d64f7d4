package main

import (
	"bytes"
	"github.com/sessionfix/sessionfix/internal/exitcode"
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

	assert.Equal(t, exitcode.Partial, e.run(t, "scan", dir))
	out := e.out.String()
	// The real reason, with the file and the line, and how to repair it (issue 23 item 9; it
	// said "not rewritable here: a key clash or a file that must not be written").
	assert.Contains(t, out, "15 names a provider rejects were kept: 12 legacy-dotted, 3 legacy-truncated-dotted (its file "+path+
		" is not rewritten: invalid UTF-8 at line 4; repair the byte as the error above says, then run fix again)")
	assert.NotContains(t, out, "key clash")
	assert.Contains(t, e.err.String(), path+":4: error: invalid UTF-8 at line 4, column 192 (byte offset 2839): the file is not UTF-8 text, "+
		"so it is not rewritten and every name in it is kept; repair: while the agent is not running, drop or replace the byte "+
		"(GNU iconv drops every invalid byte: iconv -c -f UTF-8 -t UTF-8 FILE > FILE.new; compare, then mv FILE.new FILE), then run sessionfix fix again")
	assert.NotContains(t, out, "kept by --keep-truncated")

	// Given --keep-truncated, the flag is the reason.
	e.run(t, "scan", "--keep-truncated", dir)
	assert.Contains(t, e.out.String(), "legacy-truncated-dotted (kept by --keep-truncated; fix: run without it)")
}
