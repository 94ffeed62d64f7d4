package copilot

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Kind is what a rule does.
type Kind string

// Rule kinds: the four flags, a persisted grant, a custom agent's tools entry, a skill's
// allowed-tools entry.
const (
	KindAllow     Kind = "allow-tool"      // --allow-tool: approved without asking
	KindDeny      Kind = "deny-tool"       // --deny-tool: denied, before every allow
	KindAvailable Kind = "available-tools" // --available-tools: only these are offered
	KindExcluded  Kind = "excluded-tools"  // --excluded-tools: these are not offered
	KindGrant     Kind = "grant"           // permissions-config.json tool_approvals: an allow
	KindAgentTool Kind = "agent-tools"     // a custom agent's tools: entry (raw names)
	KindSkillTool Kind = "skill-allowed"   // a skill's allowed-tools entry (the allow grammar)
)

// IsPermission reports whether rules of kind k are permission patterns (server(tool)): allow,
// deny, a grant, a skill's allowed-tools.
func (k Kind) IsPermission() bool {
	return k == KindAllow || k == KindDeny || k == KindGrant || k == KindSkillTool
}

// IsFilter reports whether rules of kind k decide what is offered (tool names, not patterns).
func (k Kind) IsFilter() bool { return k == KindAvailable || k == KindExcluded }

// Source kinds.
const (
	SourceFlags       = "flags"              // a copilot invocation in a script, alias or workflow
	SourcePermissions = "permissions-config" // permissions-config.json
	SourceAgent       = "agent"              // a custom agent file
	SourceSkill       = "skill"              // a skill's front matter
)

// Pos is where something is in a file: 1-based line and column (bytes), and the byte offset.
type Pos struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Col    int    `json:"col"`
	Offset int    `json:"offset"`
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Span is a byte range [Start, End) of a file.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Rule is one rule as Copilot CLI reads it.
type Rule struct {
	Kind Kind `json:"kind"`
	// Text is the rule as Copilot sees it (after shell or YAML unquoting, one element of a
	// comma list): "lit(literature.search_pubmed)", "foo.bar", "lit-get-data", "lit/get+data".
	Text string `json:"text"`
	// Server and Tool are a permission pattern's parts (Server the "kind" part: an MCP server
	// key, or shell, write, url…); HasTool false for "server" alone (every tool). Filter and
	// agent entries keep Text only.
	Server  string `json:"server,omitempty"`
	Tool    string `json:"tool,omitempty"`
	HasTool bool   `json:"has_tool,omitempty"`
	// Err is why a permission pattern is outside the grammar (Copilot stops with "Invalid rule
	// format"); "" when it parses.
	Err string `json:"error,omitempty"`
	// Source is where the rule comes from (SourceFlags, …); Where says more (the flag, the
	// location of a grant, the agent or skill).
	Source string `json:"source"`
	Where  string `json:"where,omitempty"`
	// Pos is where the rule's text starts in its file; Token the byte span of the quoted shell
	// word or YAML scalar (or JSON string) holding it.
	Pos   Pos  `json:"pos"`
	Token Span `json:"token"`
	// ToolSpan is the byte span of the tool part in the file when those bytes are the tool
	// part itself (no quote, escape or line continuation inside): what a rewrite replaces.
	// Nil when the tool part cannot be rewritten in place (or there is none).
	ToolSpan *Span `json:"tool_span,omitempty"`
	// Invocation indexes the invocation the rule belongs to (flags only; -1 otherwise).
	Invocation int `json:"invocation"`
}

// ruleRE is the grammar of a permission pattern (1.0.39 HQi, 1.0.40 kWi): kind(argument?).
var ruleRE = regexp.MustCompile(`^([a-zA-Z0-9_./@-]+)(\(([^)]+)\))?$`)

// ErrRuleFormat is Copilot's "Invalid rule format" (wrapped by ParseRule).
var ErrRuleFormat = errors.New("invalid rule format")

// ParseRule parses a permission pattern as 1.0.40's WB does: "server" or "server(tool)", the
// server part of [a-zA-Z0-9_./@-], the tool part anything but ")" (at least one character).
// Text, Server, Tool and HasTool are set; an error wraps ErrRuleFormat (Copilot stops with
// "Invalid rule format: …").
func ParseRule(text string) (Rule, error) {
	r := Rule{Text: text, Invocation: -1}
	m := ruleRE.FindStringSubmatch(text)
	if m == nil {
		err := fmt.Errorf("%w: %q (want server or server(tool), the server of [a-zA-Z0-9_./@-])", ErrRuleFormat, text)
		r.Err = err.Error()
		return r, err
	}
	r.Server, r.Tool, r.HasTool = m[1], m[3], m[2] != ""
	return r, nil
}

// SplitList is commander's list split of one flag value (1.0.40 ome): at every "," outside
// brackets, each part trimmed, empty parts dropped. parts[i] starts at byte starts[i] of value.
func SplitList(value string) (parts []string, starts []int) {
	depth, cur := 0, 0
	flush := func(end int) {
		seg := value[cur:end]
		trimmed := strings.TrimSpace(seg)
		if trimmed != "" {
			parts = append(parts, trimmed)
			starts = append(starts, cur+strings.Index(seg, trimmed))
		}
	}
	for i := 0; i < len(value); i++ {
		switch value[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				flush(i)
				cur = i + 1
			}
		}
	}
	flush(len(value))
	return parts, starts
}

// Problem is something in a rule source that could not be read, with where and why.
type Problem struct {
	Pos    Pos    `json:"pos"`
	Reason string `json:"reason"`
}

func (p Problem) String() string { return p.Pos.String() + ": " + p.Reason }
