package copilot

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ExtractYAML finds the copilot invocations of a CI workflow (GitHub Actions and the like): every
// string scalar naming copilot is read as shell (a run: step, an alias, a command list entry),
// with the positions of its bytes in the file: a literal or folded block scalar line by line,
// a plain, single- or double-quoted scalar character by character. A scalar whose bytes cannot
// be mapped to its value (a multi-line quoted or plain scalar, an escape other than \" and \\)
// is a problem naming it: its invocations are not read. A file that is not YAML is a problem at
// the line the parser names.
func ExtractYAML(file string, src []byte) ([]Invocation, []Problem) {
	lc := newLineCol(src)
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, []Problem{{Pos: Pos{File: file, Line: 1, Col: 1}, Reason: "not YAML: " + err.Error()}}
	}
	lines := lineStarts(src)
	var out []Invocation
	var problems []Problem
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil {
			return
		}
		if n.Kind == yaml.ScalarNode && (n.Tag == "!!str" || n.Tag == "") && strings.Contains(n.Value, "copilot") {
			t, ok := scalarText(src, lines, n)
			if !ok {
				problems = append(problems, Problem{Pos: Pos{File: file, Line: n.Line, Col: n.Column, Offset: offsetOf(lines, n.Line, n.Column)},
					Reason: "a YAML scalar naming copilot whose bytes do not map to its value (a multi-line quoted or plain scalar, or an escape): its invocations were not read"})
				return
			}
			ins, ps := extractText(file, lc, t)
			for _, in := range ins {
				for k := range in.Rules {
					in.Rules[k].Invocation = len(out)
				}
				out = append(out, in)
			}
			problems = append(problems, ps...)
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
	return out, problems
}

func lineStarts(src []byte) []int {
	out := []int{0}
	for i, c := range src {
		if c == '\n' {
			out = append(out, i+1)
		}
	}
	return out
}

func offsetOf(lines []int, line, col int) int {
	if line < 1 || line > len(lines) {
		return 0
	}
	return lines[line-1] + col - 1
}

// lineAt returns the bytes of 1-based line l (without its newline) and its start offset.
func lineAt(src []byte, lines []int, l int) ([]byte, int, bool) {
	if l < 1 || l > len(lines) {
		return nil, 0, false
	}
	start := lines[l-1]
	end := len(src)
	if l < len(lines) {
		end = lines[l] - 1
	}
	return bytes.TrimSuffix(src[start:end], []byte("\r")), start, true
}

// scalarText maps a scalar's value to the file offsets of its bytes.
func scalarText(src []byte, lines []int, n *yaml.Node) (shellText, bool) {
	switch n.Style {
	case yaml.LiteralStyle, yaml.FoldedStyle:
		return blockText(src, lines, n)
	case yaml.SingleQuotedStyle, yaml.DoubleQuotedStyle, 0:
		return inlineText(src, lines, n)
	}
	return shellText{}, false
}

// blockText rebuilds a block scalar's value from the lines after its indicator: each content
// line without its indentation (the first content line's), joined by "\n" (literal) or " "
// (folded; an empty line stands for "\n"); the join byte maps to the newline it stands for.
// The result must be the parser's value (up to trailing newlines).
func blockText(src []byte, lines []int, n *yaml.Node) (shellText, bool) {
	type seg struct {
		start int // file offset of the content's first byte
		text  []byte
		nl    int // file offset of the line's end
	}
	var segs []seg
	indent := -1
	for l := n.Line + 1; ; l++ {
		b, start, ok := lineAt(src, lines, l)
		if !ok {
			break
		}
		trimmed := bytes.TrimLeft(b, " ")
		lead := len(b) - len(trimmed)
		if len(trimmed) == 0 {
			segs = append(segs, seg{start: start + len(b), nl: start + len(b)})
			continue
		}
		if indent < 0 {
			indent = lead
		}
		if lead < indent {
			break
		}
		segs = append(segs, seg{start: start + indent, text: b[indent:], nl: start + len(b)})
	}
	var t shellText
	for k, sg := range segs {
		if k > 0 {
			sep := "\n"
			if n.Style == yaml.FoldedStyle && len(sg.text) > 0 && len(segs[k-1].text) > 0 {
				sep = " "
			}
			t.s += sep
			t.off = append(t.off, segs[k-1].nl)
		}
		for m := range sg.text {
			t.s += string(sg.text[m])
			t.off = append(t.off, sg.start+m)
		}
	}
	if strings.TrimRight(t.s, "\n") != strings.TrimRight(n.Value, "\n") {
		return shellText{}, false
	}
	return t, true
}

// inlineText maps a one-line plain, single- or double-quoted scalar.
func inlineText(src []byte, lines []int, n *yaml.Node) (shellText, bool) {
	b, start, ok := lineAt(src, lines, n.Line)
	if !ok || n.Column-1 > len(b) {
		return shellText{}, false
	}
	var t shellText
	i := n.Column - 1
	switch n.Style {
	case 0:
		for ; i < len(b) && len(t.s) < len(n.Value); i++ {
			t.s += string(b[i])
			t.off = append(t.off, start+i)
		}
	case yaml.SingleQuotedStyle:
		if b[i] != '\'' {
			return shellText{}, false
		}
		for i++; i < len(b); i++ {
			if b[i] == '\'' {
				if i+1 < len(b) && b[i+1] == '\'' {
					t.s += "'"
					t.off = append(t.off, start+i)
					i++
					continue
				}
				break
			}
			t.s += string(b[i])
			t.off = append(t.off, start+i)
		}
	case yaml.DoubleQuotedStyle:
		if b[i] != '"' {
			return shellText{}, false
		}
		for i++; i < len(b) && b[i] != '"'; i++ {
			if b[i] == '\\' {
				if i+1 < len(b) && (b[i+1] == '"' || b[i+1] == '\\' || b[i+1] == '/') {
					i++
				} else {
					return shellText{}, false
				}
			}
			t.s += string(b[i])
			t.off = append(t.off, start+i)
		}
	}
	if t.s != n.Value {
		return shellText{}, false
	}
	return t, true
}
