package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionfix/sessionfix/internal/cliargs"
	"github.com/sessionfix/sessionfix/internal/exitcode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"
)

// TestEveryEmptyFlagValueIsAUsageError gives every value flag of every command an empty value
// (a script's unset variable: `--state-dir "$DIR"`): each is a usage error, exit 2, naming the
// flag, with nothing on standard output — before, --state-dir, --agent, --fail-on, check's
// release flags, audit's --project/--agents/--subagent/--history and fix --rules' flags (among
// others) were taken as not given and the run went on with the default. The flags whose own
// check already refused "" (--format, --provider, …) keep their message.
func TestEveryEmptyFlagValueIsAUsageError(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(t.TempDir(), "qwen-home") // an audit PATH: a Qwen Code home
	require.NoError(t, os.MkdirAll(home, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "settings.json"), []byte("{}\n"), 0o644))
	// What each command needs besides the flag, so that only the empty value is wrong.
	rest := map[string][]string{"undo": {"--last"}, "runs": nil, "names": {"foo.bar"}, "audit": {home},
		"check": {"--provider", "openai-responses", dir}}
	app := newApp(testEnv(t))
	n := 0
	for _, cmd := range app.Commands {
		for _, f := range cmd.Flags {
			if _, ok := f.(*cli.BoolFlag); ok {
				continue
			}
			name := f.Names()[0]
			if name == "help" {
				continue
			}
			for _, form := range [][]string{{"--" + name, ""}, {"--" + name + "="}} {
				args := append([]string{cmd.Name}, form...)
				if r, ok := rest[cmd.Name]; !ok {
					args = append(args, dir)
				} else if cmd.Name == "check" && name == "provider" {
					args = append(args, dir)
				} else {
					args = append(args, r...)
				}
				r := runCLI(t, testEnv(t), "", args...)
				n++
				assert.Equal(t, exitcode.Usage, r.code, "%v: %s", args, r.err)
				assert.Empty(t, r.out, "%v", args)
				if cliargs.EmptyValueNoun(f) == "" {
					assert.Contains(t, r.err, "--"+name, "%v", args) // its own check's message
					continue
				}
				assert.Equal(t, "sessionfix: --"+name+" needs "+cliargs.EmptyValueNoun(f)+"; it was given an empty one\n", r.err, "%v", args)
			}
		}
	}
	assert.Greater(t, n, 100, "every value flag of every command, in both forms")

	// An alias is spelled as the help spells the flag.
	r := runCLI(t, testEnv(t), "", "audit", "-o", "", dir)
	assert.Equal(t, exitcode.Usage, r.code)
	assert.Equal(t, "sessionfix: --out needs a path (- for standard output); it was given an empty one\n", r.err)
}

// The nouns of the cases the field found (stop 17's closing note).
func TestEmptyFlagMessages(t *testing.T) {
	dir := t.TempDir()
	for args, want := range map[string]string{
		"fix --state-dir ''":                         "--state-dir needs a directory",
		"undo --state-dir '' --last":                 "--state-dir needs a directory",
		"runs --state-dir ''":                        "--state-dir needs a directory",
		"check --qwen-version '' --provider kimi":    "--qwen-version needs a value",
		"scan --agent ''":                            "--agent needs an agent name",
		"scan --fail-on ''":                          "--fail-on needs a finding class",
		"audit --project ''":                         "--project needs a directory",
		"fix --rules --inventory x --project-key ''": "--project-key needs a value",
	} {
		var argv []string
		for _, a := range strings.Fields(args) {
			argv = append(argv, strings.Trim(a, "'"))
		}
		if argv[0] != "runs" {
			argv = append(argv, dir)
		}
		r := runCLI(t, testEnv(t), "", argv...)
		assert.Equal(t, exitcode.Usage, r.code, args)
		assert.Equal(t, "sessionfix: "+want+"; it was given an empty one\n", r.err, args)
	}
}

// An empty SESSIONFIX_STATE_DIR (a cron environment) is not the command line: it still reads as
// unset (the XDG default), as before.
func TestEmptyStateDirEnvIsUnset(t *testing.T) {
	t.Setenv("SESSIONFIX_STATE_DIR", "")
	r := runCLI(t, testEnv(t), "", "runs")
	assert.Equal(t, exitcode.OK, r.code, r.err)
}

// `scan --json DIR` (a cron line written from memory) names --format: the format is a value of
// it. Every command with --format, each value its usage lists; another unknown flag reads as
// before.
func TestFormatNameAsAFlag(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ cmd, value string }{
		{"scan", "json"}, {"scan", "sarif"}, {"fix", "json"}, {"check", "sarif"}, {"undo", "json"},
		{"runs", "json"}, {"names", "jsonl"}, {"audit", "csv"}, {"audit", "html"},
	} {
		r := runCLI(t, testEnv(t), "", c.cmd, "--"+c.value, dir)
		assert.Equal(t, exitcode.Usage, r.code, "%v", c)
		assert.Equal(t, "sessionfix: unknown flag --"+c.value+": the output format is a value of --format (--format "+c.value+"; sessionfix "+c.cmd+" --help lists the flags)\n", r.err, "%v", c)
	}
	for _, f := range []string{"--output", "--or", "--frob"} {
		r := runCLI(t, testEnv(t), "", "scan", f, dir)
		assert.Equal(t, exitcode.Usage, r.code)
		assert.Equal(t, "sessionfix: unknown flag "+f+" (sessionfix scan --help lists the flags)\n", r.err)
	}
}
