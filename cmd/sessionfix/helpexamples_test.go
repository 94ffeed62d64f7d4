package main

import (
	"errors"
	"fmt"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/helpformat"
	"os/exec"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/urfave/cli/v2"
)

// helpExamples are the EXAMPLES of a --help text as a user copies them: each command whole
// (its " \" continuations joined), without its "# comment".
func helpExamples(text string) []string {
	var out []string
	for _, sec := range helpformat.Parse(text) {
		if sec.Name != "EXAMPLES" {
			continue
		}
		for _, it := range sec.Items {
			if it.Kind == helpformat.Example {
				out = append(out, it.Term)
			}
		}
	}
	return out
}

// helpCommands are the command paths whose --help a script's helpexamples reads: the app's
// (nil), then every visible command and subcommand in the app's order.
func helpCommands() [][]string {
	out := [][]string{nil}
	var walk func(parent []string, cmds []*cli.Command)
	walk = func(parent []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := append(append([]string(nil), parent...), c.Name)
			out = append(out, p)
			walk(p, c.Subcommands)
		}
	}
	walk(nil, newApp(&Env{}).Commands)
	return out
}

// cmdHelpExamples: helpexamples runs every example of every --help (helpCommands' order, each
// command's examples in the order shown) as written, with sh -c in the script's directory and
// environment, and fails unless each exits 0, or 5 (a finding: what --fail-on, --baseline
// and check are for). Each example and its exit status are logged; a failing one with its
// standard error. An example count of zero fails too (the help lost its examples).
func cmdHelpExamples(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: helpexamples")
	}
	var failed []string
	n := 0
	for _, cmd := range helpCommands() {
		ts.Check(ts.Exec("sessionfix", append(cmd, "--help")...))
		for _, ex := range helpExamples(ts.ReadFile("stdout")) {
			n++
			err := ts.Exec("sh", "-c", ex)
			code := 0
			var ee *exec.ExitError
			switch {
			case errors.As(err, &ee):
				code = ee.ExitCode()
			case err != nil:
				ts.Fatalf("%s: %v", ex, err)
			}
			ts.Logf("example %d (%s --help): exit %d: %s", n, strings.TrimSpace("sessionfix "+strings.Join(cmd, " ")), code, ex)
			if code != 0 && code != exitcode.Finding {
				failed = append(failed, fmt.Sprintf("%s\n    exit %d; stderr:\n%s", ex, code, indentText(ts.ReadFile("stderr"), "    ")))
			}
		}
	}
	if n == 0 {
		ts.Fatalf("no example found in any --help")
	}
	if len(failed) > 0 {
		ts.Fatalf("%d of %d --help examples do not run as written:\n%s", len(failed), n, strings.Join(failed, "\n"))
	}
}

func indentText(s, pad string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pad + l
	}
	return strings.Join(lines, "\n")
}
