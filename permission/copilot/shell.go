package copilot

import (
	"path"
	"strings"
)

// A shell word as the shell would pass it to a program: its text after quote removal, where
// each byte of it came from in the file (off), the word's own span, and, when an expansion
// ($VAR, ${…}, $(…), `…`) makes its value unknown until run time, why.
type word struct {
	text    string
	off     []int // off[i]: the file offset of text[i]
	span    Span
	dynamic string
}

// shellText is text to tokenize with the file offset of each of its bytes (a whole file: the
// identity; an alias value or a YAML scalar: the offsets its bytes came from).
type shellText struct {
	s   string
	off []int
}

// command is one simple command: its words, in order.
type command struct{ words []word }

// isNameByte reports whether c may follow "$" to start a parameter expansion.
func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '{' || c == '(' || c == '@' || c == '*' || c == '#' || c == '?' || c == '$' || c == '!' || c == '-'
}

// tokenize splits t into simple commands the way a POSIX shell reads words: blanks separate
// words; newlines, ";", "&", "|", "(" and ")" separate commands; "#" at a word's start begins a
// comment; single quotes keep everything; double quotes keep everything but "\", "$" and "`";
// a backslash quotes the next byte (a backslash-newline is removed). Expansions are not
// performed: a word holding one is marked dynamic. Here-documents and case patterns are not
// modelled (their lines read as commands).
func tokenize(t shellText) []command {
	k := &tokenizer{t: t, s: t.s}
	s := t.s
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			k.endWord(k.fileEnd(i))
			i++
		case c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			k.endCmd(k.fileEnd(i))
			i++
		case c == '#' && k.w == nil:
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '\\':
			if i+1 < len(s) && s[i+1] == '\n' {
				i += 2 // line continuation
				continue
			}
			k.start(i)
			if i+1 < len(s) {
				k.add(i + 1)
			}
			i += 2
		case c == '\'':
			i = k.singleQuoted(i)
		case c == '"':
			i = k.doubleQuoted(i)
		case (c == '$' && i+1 < len(s) && isNameByte(s[i+1])) || c == '`':
			k.start(i)
			e := skipExpansion(s, i)
			k.w.dynamic = "it holds " + firstLine(s[i:e]) + ", which the shell expands at run time"
			i = e
		default:
			k.start(i)
			k.add(i)
			i++
		}
	}
	k.endCmd(k.fileEnd(len(s)))
	return k.out
}

// tokenizer is tokenize's state: the commands so far, the command and the word being read.
type tokenizer struct {
	t   shellText
	s   string
	out []command
	cur command
	w   *word
}

// endWord ends the word being read (if any) at file offset end.
func (k *tokenizer) endWord(end int) {
	if k.w != nil {
		k.w.span.End = end
		k.cur.words = append(k.cur.words, *k.w)
		k.w = nil
	}
}

// endCmd ends the word and the command being read at file offset end.
func (k *tokenizer) endCmd(end int) {
	k.endWord(end)
	if len(k.cur.words) > 0 {
		k.out = append(k.out, k.cur)
	}
	k.cur = command{}
}

// start begins a word at byte i unless one is being read.
func (k *tokenizer) start(i int) {
	if k.w == nil {
		k.w = &word{span: Span{Start: k.t.off[i]}}
	}
}

// add appends byte i to the word being read.
func (k *tokenizer) add(i int) {
	k.w.text += k.s[i : i+1]
	k.w.off = append(k.w.off, k.t.off[i])
}

// fileEnd is the file offset just past byte i-1.
func (k *tokenizer) fileEnd(i int) int {
	if i == 0 {
		return k.t.off[0]
	}
	return k.t.off[i-1] + 1
}

// singleQuoted reads the single-quoted text starting at s[i] == '\” and returns the index
// after its closing quote.
func (k *tokenizer) singleQuoted(i int) int {
	k.start(i)
	j := i + 1
	for j < len(k.s) && k.s[j] != '\'' {
		k.add(j)
		j++
	}
	return j + 1
}

// doubleQuoted reads the double-quoted text starting at s[i] == '"' (a backslash quotes only
// $ ` " \ and a newline; an expansion marks the word dynamic) and returns the index after its
// closing quote.
func (k *tokenizer) doubleQuoted(i int) int {
	s := k.s
	k.start(i)
	j := i + 1
	for j < len(s) && s[j] != '"' {
		switch {
		case s[j] == '\\' && j+1 < len(s) && strings.IndexByte("$`\"\\\n", s[j+1]) >= 0:
			if s[j+1] != '\n' {
				k.add(j + 1)
			}
			j += 2
		case (s[j] == '$' && j+1 < len(s) && isNameByte(s[j+1])) || s[j] == '`':
			k.w.dynamic = "it holds " + firstLine(s[j:skipExpansion(s, j)]) + ", which the shell expands at run time"
			j = skipExpansion(s, j)
		default:
			k.add(j)
			j++
		}
	}
	return j + 1
}

// skipExpansion returns the index after the expansion starting at s[i] == '$' (or '`'):
// `…`, $(…), ${…} (nested), $NAME, or one special character ($@, $1, $?, …).
func skipExpansion(s string, i int) int {
	if s[i] == '`' {
		j := strings.IndexByte(s[i+1:], '`')
		if j < 0 {
			return len(s)
		}
		return i + 1 + j + 1
	}
	if i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{') {
		open, close := s[i+1], byte(')')
		if open == '{' {
			close = '}'
		}
		depth := 0
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case open:
				depth++
			case close:
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(s)
	}
	j := i + 1
	for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
		j++
	}
	if j == i+1 && j < len(s) {
		j++ // $@, $1, $?, …
	}
	return j
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + "…"
	}
	return s
}

// lineCol converts file offsets to 1-based line and byte column.
type lineCol struct{ nl []int }

func newLineCol(src []byte) lineCol {
	var nl []int
	for i, c := range src {
		if c == '\n' {
			nl = append(nl, i)
		}
	}
	return lineCol{nl: nl}
}

func (lc lineCol) pos(file string, off int) Pos {
	lo, hi := 0, len(lc.nl)
	for lo < hi { // lines before off
		m := (lo + hi) / 2
		if lc.nl[m] < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	col := off + 1
	if lo > 0 {
		col = off - lc.nl[lo-1]
	}
	return Pos{File: file, Line: lo + 1, Col: col, Offset: off}
}

// Invocation is one copilot command found in a rule source: where its command word is, the
// rules its flags give (Rule.Invocation is its index), whether it allows every tool
// (--allow-all-tools, --allow-all, --yolo), and, when a flag's value could not be read
// (Problems), why.
type Invocation struct {
	Pos      Pos       `json:"pos"`
	Rules    []Rule    `json:"rules"`
	AllowAll bool      `json:"allow_all"`
	Problems []Problem `json:"problems,omitempty"`
}

var flagKinds = map[string]Kind{
	"--allow-tool": KindAllow, "--deny-tool": KindDeny, "--available-tools": KindAvailable, "--excluded-tools": KindExcluded,
}

// isCopilot reports whether w names the Copilot CLI program: a path whose last element is
// "copilot", or npx's package "@github/copilot[@version]".
func isCopilot(w string) bool {
	return path.Base(w) == "copilot" || w == "@github/copilot" || strings.HasPrefix(w, "@github/copilot@")
}

// commandArgs returns the arguments after the copilot program of cmd (ok false when cmd runs no
// copilot): leading assignments (NAME=value) and the wrappers exec, command, env, nohup, time,
// sudo and npx/pnpm dlx (with their dash options) are passed over; a dynamic command word is
// never copilot.
func commandArgs(cmd command) (prog word, args []word, ok bool) {
	ws := cmd.words
	for len(ws) > 0 {
		w := ws[0]
		switch {
		case w.dynamic != "":
			return word{}, nil, false
		case strings.Contains(w.text, "=") && !strings.HasPrefix(w.text, "-") && !strings.ContainsAny(w.text[:strings.Index(w.text, "=")], "/ "):
			ws = ws[1:]
		case w.text == "exec" || w.text == "command" || w.text == "env" || w.text == "nohup" || w.text == "time" || w.text == "sudo" || w.text == "npx" || w.text == "dlx" || w.text == "pnpm" || w.text == "bunx":
			ws = ws[1:]
			for len(ws) > 0 && strings.HasPrefix(ws[0].text, "-") {
				ws = ws[1:]
			}
		case isCopilot(w.text):
			return w, ws[1:], true
		default:
			return word{}, nil, false
		}
	}
	return word{}, nil, false
}

// maybeOption is commander's test of an option-like argument.
func maybeOption(s string) bool { return len(s) > 1 && s[0] == '-' }

// invocation reads the rule flags of one copilot command the way commander does (1.0.40):
// "--flag=value" gives that one value; "--flag v1 v2 …" gives every following argument up to
// the next option-like one (the flags are variadic, "[tools...]"); "--" ends the options. Each
// value is split at commas (SplitList). A value holding an expansion is a problem (its rules
// are not known before the shell runs).
func invocation(file string, lc lineCol, prog word, args []word, index int) Invocation {
	in := Invocation{Pos: lc.pos(file, prog.span.Start)}
	var active Kind
	addValue := func(kind Kind, flag string, w word, valueAt int) {
		if w.dynamic != "" {
			in.Problems = append(in.Problems, Problem{Pos: lc.pos(file, w.span.Start), Reason: flag + " could not be read: " + w.dynamic})
			return
		}
		value := w.text[valueAt:]
		parts, starts := SplitList(value)
		for k, p := range parts {
			at := valueAt + starts[k]
			r := Rule{Kind: kind, Text: p, Source: SourceFlags, Where: flag, Token: w.span, Invocation: index}
			r.Pos = lc.pos(file, w.off[at])
			if kind.IsPermission() {
				pr, err := ParseRule(p)
				r.Server, r.Tool, r.HasTool = pr.Server, pr.Tool, pr.HasTool
				if err != nil {
					r.Err = err.Error()
					in.Problems = append(in.Problems, Problem{Pos: r.Pos, Reason: flag + ": " + err.Error()})
				} else if r.HasTool {
					r.ToolSpan = contiguous(w.off, at+len(r.Server)+1, at+len(p)-1)
				}
			}
			in.Rules = append(in.Rules, r)
		}
	}
	for i := 0; i < len(args); i++ {
		w := args[i]
		t := w.text
		if active != "" && !maybeOption(t) {
			addValue(active, "--"+string(active), w, 0) // a dynamic value is reported there
			continue
		}
		active = ""
		if t == "--" {
			break
		}
		name, _, hasEq := strings.Cut(t, "=")
		if kind, ok := flagKinds[name]; ok {
			if hasEq {
				addValue(kind, name, w, len(name)+1)
			} else {
				active = kind
			}
			continue
		}
		switch t {
		case "--allow-all-tools", "--allow-all", "--yolo":
			in.AllowAll = true
		case "-p", "--prompt", "--model", "--resume", "--agent", "--log-dir", "--log-level", "--add-dir", "--additional-mcp-config", "--config-dir":
			i++ // takes one value
		}
		if w.dynamic != "" && !maybeOption(t) {
			// "$FLAGS": whatever it holds (rule flags too) is known only at run time
			in.Problems = append(in.Problems, Problem{Pos: lc.pos(file, w.span.Start), Reason: "an argument could not be read: " + w.dynamic + " (it may hold rule flags)"})
		}
	}
	return in
}

// contiguous returns the file span of text bytes [a, b) when they came from consecutive file
// bytes (no quote, escape or continuation between them), else nil.
func contiguous(off []int, a, b int) *Span {
	if a >= b || b > len(off) {
		return nil
	}
	for k := a + 1; k < b; k++ {
		if off[k] != off[k-1]+1 {
			return nil
		}
	}
	return &Span{Start: off[a], End: off[b-1] + 1}
}

// aliasValue returns the value word of an alias definition word "name=value" as text to
// tokenize again (the alias's body is shell), with its bytes' file offsets.
func aliasValue(w word) (shellText, bool) {
	_, v, ok := strings.Cut(w.text, "=")
	if !ok || w.dynamic != "" {
		return shellText{}, false
	}
	at := len(w.text) - len(v)
	return shellText{s: v, off: w.off[at:]}, true
}

// ExtractShell finds every copilot invocation in a shell script, an alias file (alias
// name='copilot …': the alias body is read as shell too) or a command line, and the rules its
// flags give, each with file:line:col and the byte span of its word. Problems name the
// invocations whose rule flags could not be read (an expansion, a rule outside the grammar).
func ExtractShell(file string, src []byte) ([]Invocation, []Problem) {
	off := make([]int, len(src))
	for i := range off {
		off[i] = i
	}
	return extractText(file, newLineCol(src), shellText{s: string(src), off: off})
}

func extractText(file string, lc lineCol, t shellText) ([]Invocation, []Problem) {
	var out []Invocation
	var problems []Problem
	var walk func(t shellText, depth int)
	walk = func(t shellText, depth int) {
		if len(t.s) == 0 {
			return
		}
		for _, cmd := range tokenize(t) {
			if cmd.words[0].text == "alias" && depth < 3 {
				for _, w := range cmd.words[1:] {
					if v, ok := aliasValue(w); ok {
						walk(v, depth+1)
					}
				}
				continue
			}
			prog, args, ok := commandArgs(cmd)
			if !ok {
				continue
			}
			in := invocation(file, lc, prog, args, len(out))
			problems = append(problems, in.Problems...)
			out = append(out, in)
		}
	}
	walk(t, 0)
	return out, problems
}

// Extract reads a --rules-from file by its name: *.yml and *.yaml are CI workflow YAML
// (ExtractYAML), anything else shell (ExtractShell).
func Extract(file string, src []byte) ([]Invocation, []Problem) {
	if strings.HasSuffix(file, ".yml") || strings.HasSuffix(file, ".yaml") {
		return ExtractYAML(file, src)
	}
	return ExtractShell(file, src)
}
