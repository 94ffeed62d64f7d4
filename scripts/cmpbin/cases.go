package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Case is one comparison: its steps run in order in a fresh copy of the template root.
type Case struct {
	Name  string
	Steps []Step
	Text  string // the line as written after the name
}

// Step is one command of a case.
type Step struct {
	Old     bool     // "old:": run with the old binary in both runs
	Env     []string // VAR=VALUE words before the command
	Stdin   string   // "<FILE": standard input (relative to the working directory); "" /dev/null
	Stdout  string   // ">FILE": standard output written to FILE (relative to the working directory)
	Args    []string // the arguments of sessionfix, or of a builtin
	Builtin string   // "@cd", "@append"; "" for a sessionfix command
}

// String is the step as written (for reports).
func (s Step) String() string {
	var b []string
	if s.Old {
		b = append(b, "old:")
	}
	b = append(b, s.Env...)
	if s.Stdin != "" {
		b = append(b, "<"+s.Stdin)
	}
	if s.Stdout != "" {
		b = append(b, ">"+s.Stdout)
	}
	if s.Builtin != "" {
		b = append(b, s.Builtin)
	}
	for _, a := range s.Args {
		if a == "" || strings.ContainsAny(a, " \t'\"\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		b = append(b, a)
	}
	return strings.Join(b, " ")
}

// builtins are the steps the harness does itself, with their argument counts.
var builtins = map[string]int{"@cd": 1, "@append": 2}

// splitWords splits a line into words: whitespace separates them, '…' quotes literally,
// "…" quotes with \" and \\ escapes, a backslash outside quotes escapes the next character.
// A quoted empty string is a word.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// parseCase parses one line of the case list: NAME, then the steps joined by ";;".
func parseCase(line string) (Case, error) {
	line = strings.TrimSpace(line)
	name, rest, _ := strings.Cut(line, " ")
	c := Case{Name: name, Text: strings.TrimSpace(rest)}
	words, err := splitWords(c.Text)
	if err != nil {
		return c, fmt.Errorf("%s: %w", name, err)
	}
	if len(words) == 0 {
		return c, fmt.Errorf("%s: no command", name)
	}
	for len(words) > 0 {
		i := slices.Index(words, ";;")
		if i < 0 {
			i = len(words)
		}
		st, err := parseStep(words[:i])
		if err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
		c.Steps = append(c.Steps, st)
		if i == len(words) {
			break
		}
		words = words[i+1:]
	}
	return c, nil
}

func parseStep(words []string) (Step, error) {
	var s Step
	if len(words) > 0 && words[0] == "old:" {
		s.Old = true
		words = words[1:]
	}
	for len(words) > 0 {
		w := words[0]
		if k, _, ok := strings.Cut(w, "="); ok && k != "" && isEnvName(k) {
			s.Env = append(s.Env, w)
		} else if strings.HasPrefix(w, "<") && len(w) > 1 {
			s.Stdin = w[1:]
		} else if strings.HasPrefix(w, ">") && len(w) > 1 {
			s.Stdout = w[1:]
		} else {
			break
		}
		words = words[1:]
	}
	if len(words) == 0 {
		return s, fmt.Errorf("empty step")
	}
	if n, ok := builtins[words[0]]; ok {
		if len(words)-1 != n {
			return s, fmt.Errorf("%s takes %d arguments", words[0], n)
		}
		if s.Old || s.Env != nil || s.Stdin != "" || s.Stdout != "" {
			return s, fmt.Errorf("%s takes no old:, VAR=, <FILE or >FILE", words[0])
		}
		s.Builtin, s.Args = words[0], words[1:]
		return s, nil
	}
	if strings.HasPrefix(words[0], "@") {
		return s, fmt.Errorf("unknown builtin %s", words[0])
	}
	s.Args = words
	return s, nil
}

func isEnvName(k string) bool {
	for i, c := range k {
		if !(c == '_' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// readCasesFile reads a case list: one case a line, # comments and blank lines skipped; names
// are unique.
func readCasesFile(path string) ([]Case, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseCases(path, b)
}

func parseCases(path string, b []byte) ([]Case, error) {
	var out []Case
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		c, err := parseCase(l)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if first, dup := seen[c.Name]; dup {
			return nil, fmt.Errorf("%s:%d: case %s is also on line %d", path, n, c.Name, first)
		}
		seen[c.Name] = n
		out = append(out, c)
	}
	return out, sc.Err()
}

// axis is one dimension of the matrix: labels (used in case names) and values (substituted in
// commands), in order.
type axis struct {
	labels, values []string
}

// generate expands a matrix (matrix.txt's syntax, see its header) into case lines "NAME TEXT",
// in the matrix's order. fixtures lists the directories of fixtures/ for "auto NAME: fixtures".
func generate(matrix []byte, fixtures []string) ([]string, error) {
	axes := map[string]*axis{}
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(matrix))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		kw, rest, _ := strings.Cut(l, " ")
		head, body, ok := strings.Cut(rest, ":")
		if !ok {
			return nil, fmt.Errorf("matrix:%d: want %q", n, kw+" NAME: …")
		}
		head, body = strings.TrimSpace(head), strings.TrimSpace(body)
		switch kw {
		case "axis":
			a := &axis{}
			for _, v := range strings.Split(body, "|") {
				label, value, ok := strings.Cut(strings.TrimSpace(v), "=")
				if !ok || label == "" {
					return nil, fmt.Errorf("matrix:%d: axis value %q is not LABEL=VALUE", n, v)
				}
				a.labels = append(a.labels, label)
				a.values = append(a.values, value)
			}
			axes[head] = a
		case "auto":
			if body != "fixtures" {
				return nil, fmt.Errorf("matrix:%d: auto axis %q: only \"fixtures\"", n, body)
			}
			a := &axis{}
			for _, d := range fixtures {
				a.labels = append(a.labels, d)
				a.values = append(a.values, "fx/"+d)
			}
			axes[head] = a
		case "case":
			lines, err := expand(head, body, axes)
			if err != nil {
				return nil, fmt.Errorf("matrix:%d: %w", n, err)
			}
			for _, cl := range lines {
				name, _, _ := strings.Cut(cl, " ")
				if seen[name] {
					return nil, fmt.Errorf("matrix:%d: case %s generated twice", n, name)
				}
				seen[name] = true
				if _, err := parseCase(cl); err != nil {
					return nil, fmt.Errorf("matrix:%d: %w", n, err)
				}
				out = append(out, cl)
			}
		default:
			return nil, fmt.Errorf("matrix:%d: unknown keyword %q", n, kw)
		}
	}
	return out, sc.Err()
}

// expand substitutes every combination of the axes named as {NAME} in the name template (the
// first named varies slowest): labels into the name, values into the command. An axis used
// in the command must be named in the name too (names stay unique).
func expand(name, cmd string, axes map[string]*axis) ([]string, error) {
	var used []string
	for _, part := range strings.Split(name, "{")[1:] {
		k, _, ok := strings.Cut(part, "}")
		if !ok {
			return nil, fmt.Errorf("unclosed { in %q", name)
		}
		if axes[k] == nil {
			return nil, fmt.Errorf("unknown axis %q", k)
		}
		if !slices.Contains(used, k) {
			used = append(used, k)
		}
	}
	for _, part := range strings.Split(cmd, "{")[1:] {
		if k, _, ok := strings.Cut(part, "}"); ok && axes[k] != nil && !slices.Contains(used, k) {
			return nil, fmt.Errorf("axis %q is in the command but not in the name", k)
		}
	}
	idx := make([]int, len(used))
	var out []string
	for {
		n, c := name, cmd
		for i, k := range used {
			a := axes[k]
			n = strings.ReplaceAll(n, "{"+k+"}", a.labels[idx[i]])
			c = strings.ReplaceAll(c, "{"+k+"}", a.values[idx[i]])
		}
		out = append(out, n+" "+strings.Join(strings.Fields(c), " "))
		i := len(idx) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(axes[used[i]].labels) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return out, nil
		}
	}
}

// fixtureDirs lists the directories of repo/fixtures, sorted.
func fixtureDirs(repo string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(repo, "fixtures"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// generateFromFile generates the case lines of the matrix file over repo's fixtures.
func generateFromFile(repo, matrix string) ([]string, error) {
	b, err := os.ReadFile(matrix)
	if err != nil {
		return nil, err
	}
	fx, err := fixtureDirs(repo)
	if err != nil {
		return nil, err
	}
	return generate(b, fx)
}

// casesHeader starts the generated case list.
const casesHeader = `# Generated by "go run ./scripts/cmpbin -gen" from matrix.txt: edit the matrix, not this file.
# One case a line: NAME, then the steps (sessionfix arguments) joined by ";;" (see main.go).
`

// writeCases generates the case list from the matrix and writes it; it returns the number of
// cases.
func writeCases(repo, matrix, dst string) (int, error) {
	lines, err := generateFromFile(repo, matrix)
	if err != nil {
		return 0, err
	}
	var b strings.Builder
	b.WriteString(casesHeader)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return len(lines), os.WriteFile(dst, []byte(b.String()), 0o644)
}

// missingCases counts the generated case lines that are not in cases (by name and text).
func missingCases(cases []Case, gen []string) int {
	have := map[string]bool{}
	for _, c := range cases {
		have[c.Name+" "+c.Text] = true
	}
	n := 0
	for _, l := range gen {
		if !have[l] {
			n++
		}
	}
	return n
}
