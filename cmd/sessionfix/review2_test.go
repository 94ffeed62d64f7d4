package main

import (
	"bytes"
	"context"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// fullWriter fails every write as a full disk does (/dev/full, a full file system behind `> f`).
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestStdoutWriteErrorIsAnError: results that cannot be written to standard output (`scan >
// report.txt` on a full disk, `audit --out - > pairs.csv`) are an error, exit 1, said on stderr;
// before, every command but names exited 0 with the report lost.
func TestStdoutWriteErrorIsAnError(t *testing.T) {
	env := testEnv(t)
	q := fixtureCopy(t)
	for _, args := range [][]string{
		{"scan", q},
		{"scan", "--format", "json", q},
		{"fix", q},
		{"audit", "--settings", "../../fixtures/qwen-settings/settings.json", "--inventory", "../../fixtures/qwen-settings/inventory.json"},
		{"runs"},
		{"--help"},
		{"names", "mcp__a.b__c"},
	} {
		t.Run(strings.Join(args[:1], " "), func(t *testing.T) {
			var errb bytes.Buffer
			e := *env
			e.In, e.Out, e.Err = strings.NewReader(""), fullWriter{}, &errb
			code := run(context.Background(), append([]string{"sessionfix"}, args...), &e)
			assert.Equal(t, exitcode.Error, code, "stderr: %s", errb.String())
			assert.Equal(t, 1, strings.Count(errb.String(), "no space left on device"), "said once: %s", errb.String())
			assert.Contains(t, errb.String(), "standard output")
		})
	}
}

// TestDryRunFixReportsAStoreInUse: a store locked past --busy-timeout is "in use", exit 4, in
// fix's dry run as in scan and fix --apply (it exited 0, the error on stderr only); scan's
// EXIT STATUS lists 4, which scan returns.
func TestDryRunFixReportsAStoreInUse(t *testing.T) {
	env := testEnv(t)
	dir, db := opencodeStore(t)
	release := holdLock(t, db, true)
	defer release()
	r := runCLI(t, env, "", "fix", "--busy-timeout", "300ms", dir)
	assert.Equal(t, exitcode.InUse, r.code, r.out+r.err)
	assert.Contains(t, r.err, "store is in use by another process")
	r = runCLI(t, env, "", "fix", "--format", "json", "--busy-timeout", "300ms", dir)
	assert.Equal(t, exitcode.InUse, r.code, r.out+r.err)
	r = runCLI(t, env, "", "scan", "--busy-timeout", "300ms", dir)
	assert.Equal(t, exitcode.InUse, r.code, r.out+r.err)
	r = runCLI(t, env, "", "scan", "--help")
	assert.Contains(t, r.out, "\n   4    refused: a store is in use by another process")
}

// TestInterruptMessageSaysTheSignalOnce: a fix stopped by SIGINT said "interrupted by SIGINT
// by SIGINT" (the command's error already named the signal, run named it again).
func TestInterruptMessageSaysTheSignalOnce(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&signalError{sig: syscall.SIGINT})
	var out, errb bytes.Buffer
	e := *env
	e.In, e.Out, e.Err = strings.NewReader(""), &out, &errb
	code := run(ctx, []string{"sessionfix", "fix", "--apply", "--yes", "--state-dir", t.TempDir(), dir}, &e)
	assert.Equal(t, 130, code)
	assert.Contains(t, errb.String(), "interrupted by SIGINT")
	assert.NotContains(t, errb.String(), "by SIGINT by SIGINT")
}

// TestPathNamedHelpIsAPath: urfave/cli gave every command a hidden "help" (alias "h")
// subcommand, so `sessionfix fix --apply --yes h` printed fix's help and exited 0 without
// fixing the store at ./h. A PATH named h or help is a path; `sessionfix help CMD` and
// `CMD --help` are the help.
func TestPathNamedHelpIsAPath(t *testing.T) {
	env := testEnv(t)
	dir := t.TempDir()
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", filepath.Join(dir, "h"))
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", filepath.Join(dir, "help"))
	t.Chdir(dir)
	for _, p := range []string{"h", "help"} {
		r := runCLI(t, env, "", "scan", p)
		assert.Equal(t, 0, r.code, r.out+r.err)
		assert.Contains(t, r.out, "scanned 4 stores", p)
		assert.NotContains(t, r.out, "USAGE:", p)
		r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", filepath.Join(dir, "S"), p)
		assert.Equal(t, 0, r.code, r.out+r.err)
		assert.Contains(t, r.out, "rewrote 35 names in 3 files", p)
	}
	r := runCLI(t, env, "", "help", "fix")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.out, "USAGE:")
	r = runCLI(t, env, "", "fix", "--help")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.out, "USAGE:")
}

// TestNamesBadInputCountReadsAsEnglish: "1 input lines could not be read" (issue 8 item 17's
// "1 other files", in names).
func TestNamesBadInputCountReadsAsEnglish(t *testing.T) {
	r := runCLI(t, testEnv(t), "mcp__a.b__c\n\xff\xfe\n", "names", "--stdin")
	assert.Equal(t, exitcode.Partial, r.code, r.out+r.err)
	assert.Contains(t, r.err, "sessionfix: 1 input line could not be read\n")
	r = runCLI(t, testEnv(t), "\xff\n\xfe\n", "names", "--stdin")
	assert.Contains(t, r.err, "sessionfix: 2 input lines could not be read\n")
}

// TestAuditEmptyOutputPathIsAUsageError: `--out "$OUT"` with OUT unset wrote the report to
// standard output and `--tools-out ""` wrote no tools table, both silently (exit 0).
func TestAuditEmptyOutputPathIsAUsageError(t *testing.T) {
	base := []string{"audit", "--settings", "../../fixtures/qwen-settings/settings.json", "--inventory", "../../fixtures/qwen-settings/inventory.json"}
	for _, flag := range []string{"--out", "--tools-out"} {
		r := runCLI(t, testEnv(t), "", append(base, flag, "")...)
		assert.Equal(t, exitcode.Usage, r.code, r.out+r.err)
		assert.Equal(t, "", r.out)
		assert.Contains(t, r.err, "sessionfix: "+flag+" needs a path (- for standard output); it was given an empty one\n")
	}
}
