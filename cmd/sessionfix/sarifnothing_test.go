package main

import (
	"encoding/json"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/owenrumney/go-sarif/v2/sarif"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseSARIF decodes a SARIF 2.1.0 log with go-sarif's own type and returns its one run.
func parseSARIF(t *testing.T, what, out string) *sarif.Run {
	t.Helper()
	var log sarif.Report
	require.NoError(t, json.Unmarshal([]byte(out), &log), "%s: not a SARIF log: %q", what, out)
	require.Equal(t, "2.1.0", log.Version, what)
	require.Len(t, log.Runs, 1, what)
	return log.Runs[0]
}

// TestSARIFWhenNothingCouldBeRead: scan, check and audit --format sarif of a PATH that does not
// exist write a valid SARIF log (one run, no results, the error as invocations[0]'s error
// notification naming the path, executionSuccessful false), keeping exit 1. The stop 18 binary
// wrote nothing at all on standard output (a CI job's upload then failed on an empty file),
// while --format json wrote {"error": …}.
func TestSARIFWhenNothingCouldBeRead(t *testing.T) {
	env := testEnv(t)
	missing := filepath.Join(t.TempDir(), "no-such-home")
	out := filepath.Join(t.TempDir(), "audit.sarif")
	for _, args := range [][]string{
		{"scan", "--format", "sarif", missing},
		{"check", "--provider", "all", "--format", "sarif", missing},
		{"audit", "--format", "sarif", missing},
		{"audit", "--format", "sarif", "--out", out, missing},
	} {
		r := runCLI(t, env, "", args...)
		assert.Equal(t, exitcode.Error, r.code, "%v: %s", args, r.err)
		doc := r.out
		if args[len(args)-2] == out {
			b, err := os.ReadFile(out)
			require.NoError(t, err, "%v: --out written", args)
			doc = string(b)
		}
		run := parseSARIF(t, strings.Join(args, " "), doc)
		assert.NotNil(t, run.Results, "%v", args)
		assert.Empty(t, run.Results, "%v", args)
		require.Len(t, run.Invocations, 1, "%v", args)
		inv := run.Invocations[0]
		require.NotNil(t, inv.ExecutionSuccessful, "%v", args)
		assert.False(t, *inv.ExecutionSuccessful, "%v", args)
		require.Len(t, inv.ToolExecutionNotifications, 1, "%v", args)
		n := inv.ToolExecutionNotifications[0]
		assert.Equal(t, "error", n.Level, "%v", args)
		require.NotNil(t, n.Message.Text, "%v", args)
		assert.Contains(t, *n.Message.Text, missing+": no such file or directory", "%v", args)
	}
	// --format json is as before: one closed error document.
	r := runCLI(t, env, "", "scan", "--format", "json", missing)
	assert.Equal(t, exitcode.Error, r.code)
	assert.JSONEq(t, `{"error":"nothing could be read: `+missing+`: no such file or directory"}`, r.out)
}

// TestSARIFNamesTheInputProblems: the problems of a run that read its input (a line that is
// not JSON: a warning; a store that cannot be opened: an error, exit 3) are the invocation's
// notifications, each with its path; executionSuccessful is false only when the run failed.
// The stop 18 binary wrote a log with no invocation: the problems were only on stderr.
func TestSARIFNamesTheInputProblems(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	session := filepath.Join(dir, "projects", "-home-demo-src-lab", "chats", "3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl")
	f, err := os.OpenFile(session, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{\"broken\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	r := runCLI(t, env, "", "scan", "--format", "sarif", dir)
	require.Equal(t, exitcode.OK, r.code, r.err)
	run := parseSARIF(t, "scan", r.out)
	assert.NotEmpty(t, run.Results, "the names are still found")
	require.Len(t, run.Invocations, 1)
	inv := run.Invocations[0]
	require.NotNil(t, inv.ExecutionSuccessful)
	assert.True(t, *inv.ExecutionSuccessful)
	require.Len(t, inv.ToolExecutionNotifications, 1)
	n := inv.ToolExecutionNotifications[0]
	assert.Equal(t, "warning", n.Level)
	assert.Contains(t, *n.Message.Text, session+":")
	assert.Contains(t, *n.Message.Text, "invalid JSON")
	require.Len(t, n.Locations, 1)
	assert.Equal(t, session, *n.Locations[0].PhysicalLocation.ArtifactLocation.URI)

	if os.Geteuid() == 0 {
		t.Skip("the unreadable-store case needs a non-root user (root reads a mode 000 file)")
	}
	require.NoError(t, os.Chmod(session, 0))
	t.Cleanup(func() { _ = os.Chmod(session, 0o644) })
	r = runCLI(t, env, "", "check", "--provider", "all", "--format", "sarif", dir)
	require.Equal(t, exitcode.Partial, r.code, r.err)
	run = parseSARIF(t, "check", r.out)
	require.Len(t, run.Invocations, 1)
	inv = run.Invocations[0]
	assert.False(t, *inv.ExecutionSuccessful)
	found := false
	for _, n := range inv.ToolExecutionNotifications {
		if n.Level == "error" && strings.Contains(*n.Message.Text, session) && strings.Contains(*n.Message.Text, "permission denied") {
			found = true
		}
	}
	assert.True(t, found, "an error notification names %s: %s", session, r.out)
}

// TestAuditSARIFOfAPartialRun: an audit whose --settings file does not exist (exit 3, the
// reason on standard error) writes a SARIF log whose invocation says executionSuccessful
// false; before, the log had no invocation and read as a complete, clean audit.
func TestAuditSARIFOfAPartialRun(t *testing.T) {
	env := testEnv(t)
	missing := filepath.Join(t.TempDir(), "settings.json")
	r := runCLI(t, env, "", "audit", "--format", "sarif", "--settings", missing)
	require.Equal(t, exitcode.Partial, r.code, r.err)
	assert.Contains(t, r.err, missing)
	run := parseSARIF(t, "audit", r.out)
	require.Len(t, run.Invocations, 1, r.out)
	require.NotNil(t, run.Invocations[0].ExecutionSuccessful)
	assert.False(t, *run.Invocations[0].ExecutionSuccessful)
}
