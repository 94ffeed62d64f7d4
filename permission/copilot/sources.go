package copilot

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"
	"go.yaml.in/yaml/v3"
)

// Location is where one kind of rule file lies: a glob under a home or a workspace.
type Location struct {
	// Glob matches the files (filepath.Glob).
	Glob string `json:"glob"`
	// Source is SourcePermissions, SourceAgent or SourceSkill; Scope "home" or "workspace".
	Source string `json:"source"`
	Scope  string `json:"scope"`
}

// Locations lists where Copilot CLI reads rule files (1.0.40's code): the home's
// permissions-config.json (persisted grants, keyed by location), its agents/*.md custom agents
// and skills/<name>/SKILL.md skills, and a workspace's .github/agents/*.md and
// .github/skills/<name>/SKILL.md. home "" or workspace "" leaves that scope out.
func Locations(home, workspace string) []Location {
	var out []Location
	if home != "" {
		out = append(out,
			Location{Glob: filepath.Join(home, "permissions-config.json"), Source: SourcePermissions, Scope: "home"},
			Location{Glob: filepath.Join(home, "agents", "*.md"), Source: SourceAgent, Scope: "home"},
			Location{Glob: filepath.Join(home, filepath.FromSlash("skills/*/SKILL.md")), Source: SourceSkill, Scope: "home"})
	}
	if workspace != "" {
		out = append(out,
			Location{Glob: filepath.Join(workspace, ".github", "agents", "*.md"), Source: SourceAgent, Scope: "workspace"},
			Location{Glob: filepath.Join(workspace, filepath.FromSlash(".github/skills/*/SKILL.md")), Source: SourceSkill, Scope: "workspace"})
	}
	return out
}

// ParsePermissionsConfig reads permissions-config.json ({"locations": {"<dir>":
// {"tool_approvals": [{"kind": "mcp", "serverName": "lit", "toolName": "…"|null}, …],
// "allowed_directories": […]}}}): each MCP approval is a KindGrant rule server(tool) (toolName
// null: the whole server) applying where Where says ("location <dir>"). Approvals of other
// kinds (commands, read, write, url…) are not MCP rules and are left out. A grant's tool part
// is rewritable in place when its JSON string holds no escape. Problems: the file is not JSON,
// a member of the wrong type.
func ParsePermissionsConfig(file string, src []byte) ([]Rule, []Problem) {
	lc := newLineCol(src)
	v, err := hujson.Parse(src)
	if err != nil {
		return nil, []Problem{{Pos: Pos{File: file, Line: 1, Col: 1}, Reason: "not JSON: " + err.Error()}}
	}
	var out []Rule
	var problems []Problem
	bad := func(at int, why string) { problems = append(problems, Problem{Pos: lc.pos(file, at), Reason: why}) }
	root, ok := v.Value.(*hujson.Object)
	if !ok {
		bad(v.StartOffset, "the file is not a JSON object")
		return nil, problems
	}
	for _, m := range root.Members {
		if name(m.Name) != "locations" {
			continue
		}
		locs, ok := m.Value.Value.(*hujson.Object)
		if !ok {
			bad(m.Value.StartOffset, "locations is not an object")
			continue
		}
		for _, loc := range locs.Members {
			dir := name(loc.Name)
			lo, ok := loc.Value.Value.(*hujson.Object)
			if !ok {
				bad(loc.Value.StartOffset, fmt.Sprintf("locations[%q] is not an object", dir))
				continue
			}
			for _, f := range lo.Members {
				if name(f.Name) != "tool_approvals" {
					continue
				}
				arr, ok := f.Value.Value.(*hujson.Array)
				if !ok {
					bad(f.Value.StartOffset, fmt.Sprintf("locations[%q].tool_approvals is not an array", dir))
					continue
				}
				for _, el := range arr.Elements {
					if r, ok := grant(file, lc, dir, el, bad); ok {
						out = append(out, r)
					}
				}
			}
		}
	}
	return out, problems
}

func name(v hujson.Value) string {
	if lit, ok := v.Value.(hujson.Literal); ok && lit.Kind() == '"' {
		return lit.String()
	}
	return ""
}

// grant reads one tool_approvals entry: an MCP approval as a rule.
func grant(file string, lc lineCol, dir string, el hujson.Value, bad func(int, string)) (Rule, bool) {
	obj, ok := el.Value.(*hujson.Object)
	if !ok {
		bad(el.StartOffset, "a tool_approvals entry is not an object")
		return Rule{}, false
	}
	var kind, server string
	var tool *hujson.Value
	toolNull := false
	for k := range obj.Members {
		m := &obj.Members[k]
		switch name(m.Name) {
		case "kind":
			kind = name(m.Value)
		case "serverName":
			server = name(m.Value)
		case "toolName":
			if lit, ok := m.Value.Value.(hujson.Literal); ok && lit.Kind() == 'n' {
				toolNull = true
			} else {
				tool = &m.Value
			}
		}
	}
	if kind != "mcp" {
		return Rule{}, false
	}
	if server == "" {
		bad(el.StartOffset, "an mcp approval without serverName")
		return Rule{}, false
	}
	r := Rule{Kind: KindGrant, Server: server, Source: SourcePermissions, Where: "location " + dir, Invocation: -1,
		Pos: lc.pos(file, el.StartOffset), Token: Span{Start: el.StartOffset, End: el.EndOffset}}
	r.Text = server
	if tool != nil && !toolNull {
		lit, ok := tool.Value.(hujson.Literal)
		if !ok || lit.Kind() != '"' {
			bad(tool.StartOffset, "toolName is not a string")
			return Rule{}, false
		}
		r.Tool, r.HasTool = lit.String(), true
		r.Text = server + "(" + r.Tool + ")"
		r.Pos = lc.pos(file, tool.StartOffset+1)
		r.Token = Span{Start: tool.StartOffset, End: tool.EndOffset}
		raw := []byte(lit)
		if !bytes.ContainsRune(raw, '\\') && len(raw) >= 2 {
			r.ToolSpan = &Span{Start: tool.StartOffset + 1, End: tool.EndOffset - 1}
		}
	}
	return r, true
}

// frontMatter returns the YAML front matter of a Markdown file ("---" lines around it) and
// the offset of its first byte; ok false when there is none.
func frontMatter(src []byte) ([]byte, int, bool) {
	s := string(src)
	if !strings.HasPrefix(s, "---\n") && !strings.HasPrefix(s, "---\r\n") {
		return nil, 0, false
	}
	start := strings.IndexByte(s, '\n') + 1
	rest := s[start:]
	for at := 0; at < len(rest); {
		nl := strings.IndexByte(rest[at:], '\n')
		line := rest[at:]
		if nl >= 0 {
			line = rest[at : at+nl]
		}
		if strings.TrimRight(line, "\r") == "---" {
			return src[start : start+at], start, true
		}
		if nl < 0 {
			break
		}
		at += nl + 1
	}
	return nil, 0, false
}

// frontMatterField returns the node of one top-level key of a file's front matter.
func frontMatterField(file string, src []byte, key string) (*yaml.Node, lineCol, int, []Problem) {
	lc := newLineCol(src)
	fm, at, ok := frontMatter(src)
	if !ok {
		return nil, lc, 0, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(fm, &doc); err != nil {
		return nil, lc, 0, []Problem{{Pos: lc.pos(file, at), Reason: "front matter is not YAML: " + err.Error()}}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, lc, 0, nil
	}
	m := doc.Content[0]
	for k := 0; k+1 < len(m.Content); k += 2 {
		if m.Content[k].Value == key {
			return m.Content[k+1], lc, at, nil
		}
	}
	return nil, lc, 0, nil
}

// ParseAgent reads a custom agent's front matter tools: (a list, or one comma-separated
// string): each entry a KindAgentTool rule (Text the entry; Copilot matches it, lower-cased,
// against "<server>/<raw tool>" of each MCP tool, or "<server>/*", or a built-in name or alias).
// No tools: or "*": every tool, no rule.
func ParseAgent(file string, src []byte) ([]Rule, []Problem) {
	return listField(file, src, "tools", KindAgentTool, SourceAgent, false)
}

// ParseSkill reads a skill's front matter allowed-tools: (one comma-separated string, split as
// 1.0.40 does: at every comma, trimmed): each entry a KindSkillTool rule in the --allow-tool
// grammar (that skills' allowed tools are approved like --allow-tool rules is assumed: no rule
// run recorded it).
func ParseSkill(file string, src []byte) ([]Rule, []Problem) {
	return listField(file, src, "allowed-tools", KindSkillTool, SourceSkill, true)
}

func listField(file string, src []byte, key string, kind Kind, source string, plainSplit bool) ([]Rule, []Problem) {
	n, lc, at, problems := frontMatterField(file, src, key)
	if n == nil {
		return nil, problems
	}
	fmLines := lineStarts(src[at:])
	abs := func(line, col int) int { return at + offsetOf(fmLines, line, col) }
	var out []Rule
	add := func(text string, off int, tok Span) {
		r := Rule{Kind: kind, Text: text, Source: source, Where: filepath.Base(filepath.Dir(file)) + "/" + filepath.Base(file), Invocation: -1,
			Pos: lc.pos(file, off), Token: tok}
		if kind.IsPermission() {
			pr, err := ParseRule(text)
			r.Server, r.Tool, r.HasTool = pr.Server, pr.Tool, pr.HasTool
			if err != nil {
				r.Err = err.Error()
				problems = append(problems, Problem{Pos: r.Pos, Reason: key + ": " + err.Error()})
			} else if r.HasTool && string(src[off:min(len(src), off+len(text))]) == text {
				r.ToolSpan = &Span{Start: off + len(r.Server) + 1, End: off + len(text) - 1}
			}
		}
		out = append(out, r)
	}
	scalar := func(s *yaml.Node, split bool) {
		start := abs(s.Line, s.Column)
		quote := 0
		if s.Style == yaml.SingleQuotedStyle || s.Style == yaml.DoubleQuotedStyle {
			quote = 1
		}
		tok := Span{Start: start, End: start + len(s.Value) + 2*quote}
		mapped := start+quote+len(s.Value) <= len(src) && string(src[start+quote:start+quote+len(s.Value)]) == s.Value
		if !split {
			if !mapped {
				problems = append(problems, Problem{Pos: lc.pos(file, start), Reason: key + " entry written with escapes: its position is approximate"})
			}
			add(s.Value, start+quote, tok)
			return
		}
		var parts []string
		var starts []int
		if plainSplit {
			from := 0
			for _, p := range strings.Split(s.Value, ",") {
				t := strings.TrimSpace(p)
				if t != "" {
					parts = append(parts, t)
					starts = append(starts, from+strings.Index(p, t))
				}
				from += len(p) + 1
			}
		} else {
			parts, starts = SplitList(s.Value)
		}
		for k, p := range parts {
			off := start + quote + starts[k]
			if !mapped {
				off = start
			}
			add(p, off, tok)
		}
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind == yaml.ScalarNode {
				scalar(c, false)
			} else {
				problems = append(problems, Problem{Pos: lc.pos(file, abs(c.Line, c.Column)), Reason: key + ": an entry that is not a string"})
			}
		}
	case yaml.ScalarNode:
		if n.Value == "*" {
			return nil, problems
		}
		scalar(n, true)
	default:
		problems = append(problems, Problem{Pos: lc.pos(file, abs(n.Line, n.Column)), Reason: key + " is neither a list nor a string"})
	}
	return out, problems
}
