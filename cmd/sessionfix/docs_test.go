package main

import (
	"fmt"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/helpformat"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"
)

// docsDir is the repository's docs/ seen from this package.
const docsDir = "../../docs"

// docsGenerated is the first line of a page this file writes; a page holding it is stale when
// it differs from what the help gives now.
const docsGenerated = "<!-- Generated from `sessionfix %s --help` by `go test ./cmd/sessionfix -update` (cmd/sessionfix/docs_test.go). Do not edit: change the help text. -->"

// TestCommandDocs writes docs/commands/<command>.md from each command's --help (the same text
// the goldens of testdata/golden/help hold, parsed by helpformat.Parse into its sections) and
// docs/commands/sessionfix.md from the top-level help, and fails when a page on disk differs
// (go test ./cmd/sessionfix -update rewrites them, as it rewrites the goldens). A page of a
// command that no longer exists is stale too.
func TestCommandDocs(t *testing.T) {
	env := testEnv(t)
	app := newApp(env)
	dir := filepath.Join(docsDir, "commands")
	seen := map[string]bool{}
	var names []string
	pages := map[string]string{}
	for _, c := range app.Commands {
		if c.Hidden {
			continue
		}
		names = append(names, c.Name)
		pages[c.Name] = commandMarkdown(c.Name, c.Usage, rawHelp(t, env, c.Name), app.Commands)
	}
	pages["sessionfix"] = commandMarkdown("", app.Usage, rawHelp(t, env), app.Commands)
	names = append(names, "sessionfix")
	require.Greater(t, len(names), 5)
	for _, n := range names {
		p := filepath.Join(dir, n+".md")
		seen[filepath.Base(p)] = true
		checkGolden(t, p, pages[n])
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	require.NoError(t, err)
	for _, f := range files {
		if seen[filepath.Base(f)] {
			continue
		}
		if *update {
			require.NoError(t, os.Remove(f))
			continue
		}
		t.Errorf("%s: no such command any more (go test ./cmd/sessionfix -update removes it)", f)
	}
}

// TestExitCodeDocs: the table between the markers of docs/exit-codes.md is exitcode's table
// (Meaning and Commands), the source of every EXIT STATUS block (-update rewrites it; the text around it
// is written by hand).
func TestExitCodeDocs(t *testing.T) {
	path := filepath.Join(docsDir, "exit-codes.md")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	const begin, end = "<!-- begin generated: exit codes -->\n", "<!-- end generated -->"
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	require.True(t, i >= 0 && j > i, "%s holds the markers %q and %q", path, begin, end)
	got := s[:i+len(begin)] + exitCodeTable() + s[j:]
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	assert.Equal(t, got, s, "%s: the table is stale (go test ./cmd/sessionfix -update rewrites it)", path)
}

// rawHelp is `sessionfix ARGS --help` as urfave/cli renders the template, before printHelp lays
// it out for 80 columns: the same sections and words, with no line broken, so a CSV header or an
// example stays whole on its page.
func rawHelp(t *testing.T, env *Env, args ...string) string {
	t.Helper()
	saved := cli.HelpPrinter
	t.Cleanup(func() { cli.HelpPrinter = saved })
	cli.HelpPrinter = func(w io.Writer, templ string, data any) { cli.HelpPrinterCustom(w, templ, data, nil) }
	r := runCLI(t, env, "", append(args, "--help")...)
	cli.HelpPrinter = saved
	require.Equal(t, 0, r.code, r.err)
	return r.out
}

// exitCodeTable is the Markdown table of every exit code, generated from exitcode's one table.
func exitCodeTable() string {
	return exitcode.Table(func(m string) string { return mdCell(mdInline(m)) })
}

// commandMarkdown renders one command's --help (help, as printed) as a Markdown page: the
// one-line usage as the lead, then each section of the help (usage and examples as shell
// blocks, options, commands and exit codes as tables, the description as paragraphs), and
// links to the other commands' pages and to exit-codes.md.
func commandMarkdown(name, usage, help string, cmds []*cli.Command) string {
	full := strings.TrimSpace("sessionfix " + name)
	var b strings.Builder
	fmt.Fprintf(&b, docsGenerated+"\n\n", name)
	fmt.Fprintf(&b, "# %s\n\n%s.\n", full, mdInline(upperFirst(usage)))
	for _, sec := range helpformat.Parse(help) {
		items := helpformat.TrimBreaks(sec.Items)
		if sec.Name == "NAME" || len(items) == 0 {
			continue
		}
		title := upperFirst(strings.ToLower(sec.Name))
		fmt.Fprintf(&b, "\n## %s\n\n", title)
		switch {
		case sec.Name == "USAGE" || sec.Name == "VERSION":
			b.WriteString("```\n")
			for _, it := range items {
				b.WriteString(it.Text + "\n")
			}
			b.WriteString("```\n")
		case sec.Name == "EXAMPLES":
			b.WriteString("```sh\n")
			for _, it := range items {
				if it.Kind != helpformat.Example {
					continue
				}
				if it.Text != "" {
					b.WriteString(it.Term + "  # " + it.Text + "\n")
					continue
				}
				b.WriteString(it.Term + "\n")
			}
			b.WriteString("```\n")
		case slices.Contains(helpformat.EntrySections, sec.Name):
			head := map[string]string{"COMMANDS": "| command | what it does |", "EXIT STATUS": "| code | meaning |"}[sec.Name]
			if head == "" {
				head = "| option | meaning |"
			}
			b.WriteString(head + "\n| --- | --- |\n")
			for _, it := range items {
				if it.Kind != helpformat.Entry {
					continue
				}
				term := "`" + helpformat.SliceFlag.ReplaceAllString(it.Term, "") + "`"
				text := strings.TrimSpace(strings.ReplaceAll(it.Text, " (default: false)", ""))
				if sec.Name == "COMMANDS" {
					term = "[" + it.Term + "](" + it.Term + ".md)"
				}
				fmt.Fprintf(&b, "| %s | %s |\n", mdCell(term), mdCell(mdInline(text)))
			}
			if sec.Name == "EXIT STATUS" {
				b.WriteString("\nEvery code, and which command returns it: [exit codes](../exit-codes.md).\n")
			}
		default:
			var para []string
			flush := func() {
				if len(para) > 0 {
					b.WriteString(strings.Join(para, "\n") + "\n")
					para = nil
				}
			}
			inCode := false
			for _, it := range items {
				switch it.Kind {
				case helpformat.Literal:
					if !inCode {
						flush()
						b.WriteString("\n```\n")
						inCode = true
					}
					b.WriteString(strings.Repeat(" ", it.Indent-1) + it.Text + "\n")
					continue
				case helpformat.Break:
					flush()
					if !inCode {
						b.WriteString("\n")
					}
					continue
				}
				if inCode {
					b.WriteString("```\n\n")
					inCode = false
				}
				para = append(para, mdInline(it.Text))
			}
			flush()
			if inCode {
				b.WriteString("```\n")
			}
		}
	}
	b.WriteString("\n## See also\n\n")
	var links []string
	if name != "" {
		links = append(links, "[sessionfix](sessionfix.md)")
	}
	for _, c := range cmds {
		if !c.Hidden && c.Name != name {
			links = append(links, "["+c.Name+"]("+c.Name+".md)")
		}
	}
	links = append(links, "[exit codes](../exit-codes.md)", "[README](../../README.md)")
	b.WriteString(strings.Join(links, " · ") + "\n")
	return regexp.MustCompile(`\n{3,}`).ReplaceAllString(b.String(), "\n\n")
}

// upperFirst returns s with its first byte upper-cased (ASCII).
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// mdCodeish is a word a reader types or reads as code: a flag, a path, a variable, a glob, a
// name with underscores, a quoted placeholder. Such a word is written as a code span, so
// Markdown neither emphasizes its _ and * nor drops its <…> as HTML.
var mdCodeish = regexp.MustCompile(`^(-{1,2}[A-Za-z0-9]|[~$./]|\[)|[_*<>{}=|\\$~]|[A-Za-z0-9]/$|\.(json|jsonl|db|md|toml|sqlite|csv|html|sarif)\b`)

// mdInline writes a help text as Markdown inline text: each code-like word (mdCodeish) as a code
// span, with the punctuation around it outside.
func mdInline(s string) string {
	var words []string
	// A JSON value written with spaces ({"a": [1, 2]}) is one word: the words up to the one
	// that closes its brackets are joined.
	for f := strings.Fields(s); len(f) > 0; {
		w, n := f[0], 1
		if strings.HasPrefix(strings.TrimLeft(w, `("'`), "{") || strings.HasPrefix(strings.TrimLeft(w, `("'`), "[") {
			depth := func(x string) int {
				return strings.Count(x, "{") + strings.Count(x, "[") - strings.Count(x, "}") - strings.Count(x, "]")
			}
			for d := depth(w); d > 0 && n < len(f); n++ {
				w += " " + f[n]
				d += depth(f[n])
			}
		}
		words, f = append(words, w), f[n:]
	}
	for i, w := range words {
		lead := len(w) - len(strings.TrimLeft(w, `("'`))
		core := strings.TrimRight(w[lead:], `.,;:)"'`)
		if strings.HasSuffix(w[lead:], "...") || strings.HasSuffix(w[lead:], "…") {
			core = w[lead:]
		}
		// A closing parenthesis that belongs to the word ("f(x)") stays in it.
		if strings.Count(core, "(") > strings.Count(core, ")") && strings.HasPrefix(w[lead+len(core):], ")") {
			core += ")"
		}
		tail := w[lead+len(core):]
		if strings.Count(core, `"`)%2 == 1 && strings.HasPrefix(tail, `"`) {
			core, tail = core+`"`, tail[1:]
		}
		if strings.HasSuffix(core, "'s") {
			core, tail = core[:len(core)-2], "'s"+tail
		}
		if core != "" && !strings.Contains(core, "`") && mdCodeish.MatchString(core) {
			words[i] = w[:lead] + "`" + core + "`" + tail
		}
	}
	return strings.Join(words, " ")
}

// mdCell escapes the | of a table cell's Markdown (GitHub unescapes it inside code spans too).
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func TestMdInline(t *testing.T) {
	for in, want := range map[string]string{
		"the --state-dir flag":                      "the `--state-dir` flag",
		"(exit 1, nothing restored)":                "(exit 1, nothing restored)",
		"files in ~/.qwen/projects/*/chats.":        "files in `~/.qwen/projects/*/chats`.",
		"a backups/ directory, or <id>":             "a `backups/` directory, or `<id>`",
		"output closed (| head went away)":          "output closed (`|` head went away)",
		"mcp__lit__x and settings.json":             "`mcp__lit__x` and `settings.json`",
		"and/or plain words":                        "and/or plain words",
		"$CODEX_HOME's config":                      "`$CODEX_HOME`'s config",
		`({"mcpServers": {…}}, the format`:          "(`{\"mcpServers\": {…}}`, the format",
		`FILE ({"servers": ["<raw tool>", …]}), or`: "FILE (`{\"servers\": [\"<raw tool>\", …]}`), or",
	} {
		assert.Equal(t, want, mdInline(in), in)
	}
}
