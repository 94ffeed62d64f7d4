package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestUnknownCommandAndHelpTopic is issue 8 item 5: "sessionfix frob" said "No help topic for
// 'frob'" with exit 1, and "sessionfix help fix" said "No help topic for 'help'".
func TestUnknownCommandAndHelpTopic(t *testing.T) {
	env := testEnv(t)
	r := runCLI(t, env, "", "frob")
	assert.Equal(t, exitcode.Usage, r.code)
	assert.Equal(t, "sessionfix: unknown command \"frob\": the commands are scan, fix, undo, runs, names, audit, check (see sessionfix --help)\n", r.err)
	assert.Empty(t, r.out)

	r = runCLI(t, env, "", "help", "frob")
	assert.Equal(t, exitcode.Usage, r.code)
	assert.Contains(t, r.err, `unknown command "frob"`)

	want := runCLI(t, env, "", "fix", "--help")
	assert.Equal(t, exitcode.OK, want.code)
	assert.Contains(t, want.out, "sessionfix fix - ")
	r = runCLI(t, env, "", "help", "fix")
	assert.Equal(t, exitcode.OK, r.code, r.err)
	assert.Equal(t, want.out, r.out, "help fix is fix --help")

	top := runCLI(t, env, "", "--help")
	r = runCLI(t, env, "", "help")
	assert.Equal(t, exitcode.OK, r.code, r.err)
	assert.Equal(t, top.out, r.out)
	assert.Contains(t, r.out, "COMMANDS:")

	r = runCLI(t, env, "", "help", "fix", "scan")
	assert.Equal(t, exitcode.Usage, r.code)
	assert.Contains(t, r.err, "help takes one command")
}

// TestSignalExitCodes is issue 8 item 9: Ctrl-C exited 1. The real command (this test binary
// running main) is stopped by SIGINT and SIGTERM while --discover waits for a server that
// never answers; it exits 128+signal and says why.
func TestSignalExitCodes(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, exitcode.Interrupted, "SIGINT"}, {syscall.SIGTERM, exitcode.Terminated, "SIGTERM"}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ready := filepath.Join(dir, "ready")
			require.NoError(t, unix.Mkfifo(ready, 0o600))
			settingsPath := filepath.Join(dir, "settings.json")
			doc := fmt.Sprintf(`{"mcpServers": {"slow": {"command": %q, "env": {%q: "hang", %q: %q}}}}`, exe, fakeMCPEnv, fakeReadyEnv, ready)
			require.NoError(t, os.WriteFile(settingsPath, []byte(doc), 0o644))

			cmd := exec.Command(exe, "audit", "--settings", settingsPath, "--discover", "--discover-timeout", "10m")
			cmd.Env = append(os.Environ(), fakeMCPEnv+"=main")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			b, err := os.ReadFile(ready) // returns once the server is up and waiting
			require.NoError(t, err)
			require.Equal(t, "ready\n", string(b))
			require.NoError(t, cmd.Process.Signal(tc.sig))
			err = cmd.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "exits with a code, not killed by the signal: %s", stderr.String())
			assert.Equal(t, tc.code, ee.ExitCode(), stderr.String())
			assert.Contains(t, stderr.String(), "sessionfix: "+tc.name+": stopping at the next safe point")
			assert.Contains(t, stderr.String(), "interrupted by "+tc.name)
		})
	}
}

// blockingReader cancels the run when the prompt starts reading, then blocks like a terminal
// nobody types into.
type blockingReader struct {
	cancel func()
	block  chan struct{}
}

func (r *blockingReader) Read([]byte) (int, error) {
	r.cancel()
	<-r.block
	return 0, io.EOF
}

// TestInterruptAtPromptAndDecline: Ctrl-C at the [y/N] prompt stops at once (exit 130,
// nothing changed, not waiting for Enter); answering no exits 6 (exitcode.Declined) for fix and
// undo --force.
func TestInterruptAtPromptAndDecline(t *testing.T) {
	dir := fixtureCopy(t)
	state := filepath.Join(t.TempDir(), "S")
	before := snapshotTree(t, dir)
	ctx, cancel := context.WithCancelCause(context.Background())
	in := &blockingReader{cancel: func() { cancel(&signalError{sig: syscall.SIGINT}) }, block: make(chan struct{})}
	defer close(in.block)
	var out, errb bytes.Buffer
	e := *testEnv(t)
	e.In, e.Out, e.Err, e.InTerminal = in, &out, &errb, true
	code := run(ctx, []string{"sessionfix", "fix", "--apply", "--state-dir", state, dir}, &e)
	assert.Equal(t, exitcode.Interrupted, code, errb.String())
	assert.True(t, strings.HasSuffix(errb.String(), "[y/N] sessionfix: interrupted by SIGINT\n"), errb.String())
	assert.Equal(t, before, snapshotTree(t, dir))

	env := testEnv(t)
	env.InTerminal = true
	r := runCLI(t, env, "n\n", "fix", "--apply", "--state-dir", state, dir)
	assert.Equal(t, exitcode.Declined, r.code, r.err)
	assert.True(t, strings.HasSuffix(r.err, "[y/N] nothing was changed\n"), r.err)
	assert.Equal(t, before, snapshotTree(t, dir))

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	require.Equal(t, exitcode.OK, r.code, r.err)
	r = runCLI(t, env, "n\n", "undo", "--force", "--last", "--state-dir", state)
	assert.Equal(t, exitcode.Declined, r.code, r.err)
	assert.Contains(t, r.err, "[y/N] nothing was changed\n")
}

// TestInterruptCodeFollowsTheSignal: the cause of the cancellation picks the code.
func TestInterruptCodeFollowsTheSignal(t *testing.T) {
	dir := fixtureCopy(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&signalError{sig: syscall.SIGTERM})
	var out, errb bytes.Buffer
	e := *testEnv(t)
	e.In, e.Out, e.Err = strings.NewReader(""), &out, &errb
	code := run(ctx, []string{"sessionfix", "scan", dir}, &e)
	assert.Equal(t, exitcode.Terminated, code)
	assert.Contains(t, errb.String(), "sessionfix: interrupted by SIGTERM")
}

// TestHelpListsOnlyTheCommandsExitCodes: every command's EXIT STATUS block lists exactly the
// codes it can return (issue 8 item 9).
func TestHelpListsOnlyTheCommandsExitCodes(t *testing.T) {
	want := map[string][]string{
		"scan":  {"0", "1", "2", "3", "4", "5", "130"},
		"fix":   {"0", "1", "2", "3", "4", "5", "6", "130"},
		"undo":  {"0", "1", "2", "3", "4", "6", "130"},
		"runs":  {"0", "1", "2", "130"},
		"names": {"0", "1", "2", "3", "130"},
		"audit": {"0", "1", "2", "3", "5", "130"},
	}
	codeLine := regexp.MustCompile(`(?m)^ +(\d+) +\S`)
	for cmd, codes := range want {
		r := runCLI(t, testEnv(t), "", cmd, "--help")
		require.Equal(t, exitcode.OK, r.code)
		block := r.out[strings.Index(r.out, "EXIT STATUS:"):]
		if end := strings.Index(block, "\n\n"); end >= 0 {
			block = block[:end]
		}
		var got []string
		for _, m := range codeLine.FindAllStringSubmatch(block, -1) {
			got = append(got, m[1])
		}
		assert.Equal(t, codes, got, "%s --help:\n%s", cmd, block)
	}
	r := runCLI(t, testEnv(t), "", "audit", "--help")
	assert.Contains(t, oneLine(r.out), "5 finding: a --fail-on condition matched (--fail-on lost,refused,gained: such a pair was found)")
	assert.Contains(t, oneLine(r.out), "130 interrupted (Ctrl-C, SIGINT); 143 terminated (SIGTERM)")
}

// TestDryRunFlagAndYesNote is issue 8 item 10: --dry-run/-n was rejected although dry-run is
// the default, and -y without --apply silently did a dry run.
func TestDryRunFlagAndYesNote(t *testing.T) {
	dir := fixtureCopy(t)
	state := filepath.Join(t.TempDir(), "S")
	before := snapshotTree(t, dir)
	plain := runCLI(t, testEnv(t), "", "fix", "--state-dir", state, dir)
	require.Equal(t, exitcode.OK, plain.code, plain.err)
	for _, flag := range []string{"--dry-run", "-n"} {
		r := runCLI(t, testEnv(t), "", "fix", flag, "--state-dir", state, dir)
		assert.Equal(t, exitcode.OK, r.code, "%s: %s", flag, r.err)
		assert.Equal(t, plain.out, r.out, "%s is the default dry run", flag)
		assert.NotContains(t, r.err, "note:")
	}
	assert.Equal(t, before, snapshotTree(t, dir))

	r := runCLI(t, testEnv(t), "", "fix", "-n", "--apply", "--yes", "--state-dir", state, dir)
	assert.Equal(t, exitcode.Usage, r.code)
	assert.Equal(t, "sessionfix: --apply and --dry-run contradict each other (nothing was changed)\n", r.err)
	assert.Equal(t, before, snapshotTree(t, dir))

	r = runCLI(t, testEnv(t), "", "fix", "-y", "--state-dir", state, dir)
	assert.Equal(t, exitcode.OK, r.code, r.err)
	assert.Equal(t, plain.out, r.out)
	assert.True(t, strings.HasPrefix(r.err, "note: --yes without --apply: this is a dry run, nothing is written (add --apply to rewrite)\n"), r.err)
	assert.Equal(t, before, snapshotTree(t, dir))
}

// TestFlagErrorsReadHuman: Go's flag wording ("invalid value \"x\" for flag -busy-timeout:
// parse error") becomes what was expected, with the flag spelled as the help spells it.
func TestFlagErrorsReadHuman(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fix", "--busy-timeout", "x"}, `sessionfix: --busy-timeout: expected a duration such as 5s, 1m30s or 500ms, got "x"` + "\n"},
		{[]string{"undo", "--busy-timeout=10", "--last"}, `sessionfix: --busy-timeout: expected a duration such as 5s, 1m30s or 500ms, got "10"` + "\n"},
		{[]string{"audit", "--discover-timeout", "soon"}, `sessionfix: --discover-timeout: expected a duration such as 5s, 1m30s or 500ms, got "soon"` + "\n"},
		{[]string{"scan", "--workers", "many"}, `sessionfix: --workers: expected a whole number such as 4, got "many"` + "\n"},
		{[]string{"fix", "--apply=maybe"}, `sessionfix: --apply: expected true or false (or the flag alone), got "maybe"` + "\n"},
		{[]string{"fix", "--nope"}, "sessionfix: unknown flag --nope (sessionfix fix --help lists the flags)\n"},
		{[]string{"scan", "-Z"}, "sessionfix: unknown flag -Z (sessionfix scan --help lists the flags)\n"},
		{[]string{"--nope"}, "sessionfix: unknown flag --nope (sessionfix --help lists the flags)\n"},
		// Another command's (or agent's) option before a path: its value is not the first
		// argument, the flag is unknown (was "flag --format comes after an argument").
		{[]string{"scan", "--claude-version", "2.1.332", "--format", "json", "."}, "sessionfix: unknown flag --claude-version (sessionfix scan --help lists the flags)\n"},
		{[]string{"check", "--claude-version", "1.0.51", "--claude-version", "bogus", "."}, "sessionfix: unknown flag --claude-version (sessionfix check --help lists the flags)\n"},
		{[]string{"scan", "--qwen-version=0.24.4", "--format", "json", "."}, "sessionfix: unknown flag --qwen-version (sessionfix scan --help lists the flags)\n"},
		{[]string{"fix", ".", "--nope"}, "sessionfix: flag --nope comes after an argument: put flags first (sessionfix fix [flags] [PATH...])\n"},
		{[]string{"fix", "--state-dir"}, "sessionfix: --state-dir needs a value (sessionfix fix --help)\n"},
	} {
		r := runCLI(t, testEnv(t), "", tc.args...)
		assert.Equal(t, exitcode.Usage, r.code, "%v", tc.args)
		assert.Equal(t, tc.want, r.err, "%v", tc.args)
		assert.Empty(t, r.out, "%v", tc.args)
	}
}

// TestClosedStdoutEndsQuietly: a reader that goes away (`sessionfix names … | head -1`) ends
// the run as it ends grep: exit 141 (128 + SIGPIPE), nothing on standard error (issue 23 item
// 12; before: "sessionfix: results not written to standard output: … broken pipe", exit 1).
// The process is never killed by the signal at whatever instant the next write came (a fix
// stopped between two stores with no closing line): SIGPIPE stays ignored, the EPIPE stops the
// run at a safe point, and a run that writes stores (fix --apply) says so in one line, with
// where its rewrites are recorded.
func TestClosedStdoutEndsQuietly(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	runClosed := func(args ...string) (*exec.ExitError, string) {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		require.NoError(t, r.Close()) // nobody reads
		defer w.Close()
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), fakeMCPEnv+"=main", "XDG_STATE_HOME="+t.TempDir())
		cmd.Stdout = w
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err = cmd.Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, stderr.String())
		ws, _ := ee.Sys().(syscall.WaitStatus)
		assert.False(t, ws.Signaled(), "killed by %v: %s", ws.Signal(), stderr.String())
		return ee, stderr.String()
	}
	ee, stderr := runClosed("names", "mcp__lit__literature.search_pubmed", "mcp__foo.bar__deploy.prod")
	assert.Equal(t, 141, ee.ExitCode(), stderr)
	assert.Empty(t, stderr)

	dir := fixtureCopy(t)
	ee, stderr = runClosed("fix", "--apply", "--yes", dir)
	assert.Equal(t, 141, ee.ExitCode(), stderr)
	assert.Equal(t, "sessionfix: standard output was closed (its reader went away): the results were not all written; sessionfix runs lists what was rewritten, for undo\n", stderr)
}

// TestMCPConfigValueErrors: an empty --mcp-config was read as a file named "" ("sessionfix:
// open : no such file or directory", exit 1), and a missing one's error named neither the flag
// nor the agent (review7). An empty value is a usage error like an empty --plan-out; a file
// that cannot be read stays exit 1, named with the flag.
func TestMCPConfigValueErrors(t *testing.T) {
	atRepoRoot(t)
	home := claudeFixture + "/dot-claude"
	for _, cmd := range [][]string{{"scan"}, {"fix"}, {"check", "--provider", "anthropic"}, {"audit", "--agent", "claude"}} {
		args := append(slices.Clone(cmd), "--mcp-config", "", home)
		r := runCLI(t, testEnv(t), "", args...)
		assert.Equal(t, exitcode.Usage, r.code, "%v", args)
		assert.Equal(t, "sessionfix: --mcp-config needs a file name; it was given an empty one\n", r.err, "%v", args)

		missing := filepath.Join(t.TempDir(), "nope.json")
		args = append(slices.Clone(cmd), "--mcp-config", missing, home)
		r = runCLI(t, testEnv(t), "", args...)
		assert.Equal(t, exitcode.Error, r.code, "%v", args)
		assert.Equal(t, "sessionfix: --mcp-config: read Claude Code MCP config: open "+missing+": no such file or directory\n", r.err, "%v", args)
	}
}

// TestEmptyAgentFileOption: an agent's file option given an empty value (--codex-config "",
// say from an unset variable) was taken as not given: the run silently planned with the
// default config (the Codex home's, $CODEX_HOME's or ~/.codex's) instead of the one the user
// meant (review7). It is a usage error like an empty --plan-out or --mcp-config.
func TestEmptyAgentFileOption(t *testing.T) {
	dir := t.TempDir()
	for _, cmd := range [][]string{{"scan"}, {"fix"}, {"check", "--provider", "openai-responses"}} {
		args := append(slices.Clone(cmd), "--agent", "codex", "--codex-config", "", dir)
		r := runCLI(t, testEnv(t), "", args...)
		assert.Equal(t, exitcode.Usage, r.code, "%v", args)
		assert.Equal(t, "sessionfix: --codex-config needs a file name; it was given an empty one\n", r.err, "%v", args)
		assert.Empty(t, r.out, "%v", args)
	}
}

// An input-file flag given an empty value (a script's unset variable) is a usage error on every
// command that takes it, not the flag left out: scan --baseline "" would otherwise compare with
// nothing, --inventory "" plan without the tools meant.
func TestEmptyFileFlag(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"scan", "--inventory", ""}, {"fix", "--inventory", ""}, {"names", "--inventory", ""},
		{"check", "--provider", "openai-responses", "--inventory", ""}, {"audit", "--inventory", ""},
		{"scan", "--profile", ""}, {"fix", "--profile", ""},
		{"scan", "--baseline", ""}, {"check", "--provider", "openai-responses", "--baseline", ""}, {"audit", "--baseline", ""},
	} {
		flag := args[len(args)-2]
		args = append(slices.Clone(args), dir)
		r := runCLI(t, testEnv(t), "", args...)
		assert.Equal(t, exitcode.Usage, r.code, "%v", args)
		assert.Equal(t, "sessionfix: "+flag+" needs a file name; it was given an empty one\n", r.err, "%v", args)
		assert.Empty(t, r.out, "%v", args)
	}
}
