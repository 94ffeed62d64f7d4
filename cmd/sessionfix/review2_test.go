package main

import (
	"bytes"
	"context"
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
			assert.Equal(t, exitError, code, "stderr: %s", errb.String())
			assert.Equal(t, 1, strings.Count(errb.String(), "no space left on device"), "said once: %s", errb.String())
			assert.Contains(t, errb.String(), "standard output")
		})
	}
}
