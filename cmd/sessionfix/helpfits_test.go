package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/helpformat"
)

// helpTexts are the --help texts of the app and of every command (walked from newApp),
// keyed "sessionfix", "sessionfix fix", ….
func helpTexts(t *testing.T) map[string]string {
	env := testEnv(t)
	out := map[string]string{}
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := append(append([]string(nil), path...), c.Name)
			r := runCLI(t, env, "", append(p, "--help")...)
			require.Equal(t, 0, r.code, r.err)
			out["sessionfix "+strings.Join(p, " ")] = r.out
			walk(p, c.Subcommands)
		}
	}
	r := runCLI(t, env, "", "--help")
	require.Equal(t, 0, r.code, r.err)
	out["sessionfix"] = r.out
	walk(nil, newApp(env).Commands)
	return out
}

var helpHeadingLine = regexp.MustCompile(`^[A-Z][A-Z0-9 ]*:$`)

// TestHelpFits: every --help line fits in 80 columns (issue 23 item 12), every section heading
// is in column 0 and every other line is indented by exactly helpformat.Indent columns or more (the
// text of an entry or a broken command below its start): one indentation everywhere.
func TestHelpFits(t *testing.T) {
	for name, text := range helpTexts(t) {
		for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			assert.LessOrEqual(t, runewidth.StringWidth(line), helpformat.Width, "%s --help line %d is wider than %d columns:\n%s", name, i+1, helpformat.Width, line)
			switch {
			case line == "":
			case helpHeadingLine.MatchString(line):
			default:
				assert.True(t, strings.HasPrefix(line, "   "), "%s --help line %d: not indented by 3: %q", name, i+1, line)
			}
		}
	}
}

// TestFormatHelpAgain: a help text laid out once is laid out the same again (helpformat.Format reads
// what it writes: comments above their example, an entry's text below itself, a NAME line
// broken), so the examples helpexamples reads from --help are the ones the help was given.
func TestFormatHelpAgain(t *testing.T) {
	for name, text := range helpTexts(t) {
		assert.Equal(t, text, helpformat.Format(text, helpformat.Width), name)
	}
}

// TestFormatHelpLayout: a paragraph is filled again, an entry's text wraps under itself, a
// comment that does not fit goes above its example, a long command is broken with " \"
// keeping a flag with its value, and a description's EXAMPLES and EXIT STATUS become sections.
func TestFormatHelpLayout(t *testing.T) {
	in := "NAME:\n   x - y\n\nDESCRIPTION:\n   one two\n   three.\n\n   EXAMPLES:\n" +
		"      sessionfix a --out file.txt --format json --inventory tools.json --workers 4 ~/.qwen\n" +
		"      sessionfix b   # short\n" +
		"      sessionfix c   # a comment far too long to stand after its command in eighty columns of text\n\n" +
		"   EXIT STATUS:\n      0    fine\n\nOPTIONS:\n   --flag value  " + strings.Repeat("word ", 20) + "(default: false)\n"
	want := `NAME:
   x - y

DESCRIPTION:
   one two three.

OPTIONS:
   --flag value  word word word word word word word word word word word word
                 word word word word word word word word

EXAMPLES:
   sessionfix a --out file.txt --format json --inventory tools.json \
       --workers 4 ~/.qwen
   sessionfix b  # short
   # a comment far too long to stand after its command in eighty columns of text
   sessionfix c

EXIT STATUS:
   0  fine
`
	assert.Equal(t, want, helpformat.Format(in, helpformat.Width))
}

// oneLine is s with every run of spaces and line breaks made one space: a --help text's words
// as a sentence, however they were laid out.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestHelpNamesEveryAgentsRoots: scan's --help names the default roots of every agent that has
// them (issue 23 item 12), from the room's Help.Roots: an agent added later with default roots
// and no words for them fails here.
func TestHelpNamesEveryAgentsRoots(t *testing.T) {
	r := runCLI(t, testEnv(t), "", "scan", "--help")
	require.Equal(t, 0, r.code, r.err)
	for _, a := range all.Agents {
		if a.Core().Roots == nil {
			continue
		}
		if assert.NotNil(t, all.HelpOf(a), "%s has default roots and no Help", a.Core().ID) && assert.NotEmpty(t, all.HelpOf(a).Roots, "%s: Help.Roots", a.Core().ID) {
			assert.Contains(t, oneLine(r.out), oneLine(all.HelpOf(a).Roots), "scan --help names %s's default roots", a.Core().ID)
		}
	}
}
