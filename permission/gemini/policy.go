package gemini

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// PolicyFile is one policies/*.toml file (packages/core/src/policy/toml-loader.ts): [[rule]]
// tables of toolName (a string or a list), mcpName, decision, priority, modes, … . Every
// release from 0.13.0 validates the file against its schema as a whole: one bad rule drops
// every rule of the file (FileCheck).
type PolicyFile struct {
	Path  string `json:"path"`
	Scope Scope  `json:"scope"`
	Data  []byte `json:"-"`
	// Rules are the [[rule]] entries in file order (nil when the file does not parse).
	Rules []*PolicyRule `json:"rules"`
	// Checkers counts the [[safety_checker]] entries (validated, never modelled).
	Checkers int `json:"safety_checkers"`
	// SyntaxError is the TOML error of a file no release can read (its rules are all dropped).
	SyntaxError *ParseError `json:"syntax_error,omitempty"`
	// NoPositions: the file decodes but its layout could not be followed: rules are named
	// by file and index, and no rewrite is planned in it.
	NoPositions bool `json:"no_positions,omitempty"`

	doc      map[string]any // the decoded document (schema validation)
	checkers []any
}

// PolicyRule is one [[rule]] of a policy file, as decoded, with where its values are.
type PolicyRule struct {
	// Index is the rule's place in the file (0-based; the CLI's messages say "Rule #Index+1").
	Index int `json:"index"`
	// Pos is the rule's [[rule]] header (or its inline table).
	Pos
	// ToolNames are toolName's strings (ToolNameList: toolName is a list); none when absent.
	ToolNames    []Entry `json:"tool_names"`
	ToolNameList bool    `json:"tool_name_list,omitempty"`
	// MCPName is mcpName (nil when absent).
	MCPName *Entry `json:"mcp_name,omitempty"`
	// Decision ("allow", "deny", "ask_user"), Priority (0–999), Modes, Interactive, Subagent as
	// decoded (a value of the wrong type fails the schema: FileCheck).
	Decision    string   `json:"decision"`
	Priority    int64    `json:"priority"`
	Modes       []string `json:"modes,omitempty"`
	Interactive *bool    `json:"interactive,omitempty"`
	Subagent    string   `json:"subagent,omitempty"`
	// ArgsDependent: argsPattern, commandPrefix or commandRegex narrows the rule to some
	// arguments (its outcome for a tool depends on the call).
	ArgsDependent bool `json:"args_dependent,omitempty"`
	// Annotations: toolAnnotations narrows the rule to tools whose server annotates them so.
	Annotations bool `json:"tool_annotations,omitempty"`

	raw map[string]any
	// Where a new key line may be inserted before toolName (its line start and indentation;
	// Insert < 0: nowhere), and whether the rule is an inline table.
	insertAt int
	indent   string
	inline   bool
	keyStart int
}

// Text is the rule as a user reads it: `toolName = "foo.bar__wipe"` or `mcpName = "lit",
// toolName = "ok_tool"`.
func (r *PolicyRule) Text() string {
	var parts []string
	if r.MCPName != nil {
		parts = append(parts, fmt.Sprintf("mcpName = %q", r.MCPName.Value))
	}
	switch {
	case r.ToolNameList:
		var q []string
		for _, t := range r.ToolNames {
			q = append(q, fmt.Sprintf("%q", t.Value))
		}
		parts = append(parts, "toolName = ["+strings.Join(q, ", ")+"]")
	case len(r.ToolNames) == 1:
		parts = append(parts, fmt.Sprintf("toolName = %q", r.ToolNames[0].Value))
	default:
		parts = append(parts, "(no toolName)")
	}
	return strings.Join(parts, ", ")
}

// ParsePolicy reads a policy file. It never fails: a file the CLI cannot read has SyntaxError
// (and no rules); a schema problem is a release's verdict (FileCheck).
func ParsePolicy(path string, data []byte, scope Scope) *PolicyFile {
	f := &PolicyFile{Path: path, Scope: scope, Data: data}
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		pos := Pos{path, 1, 1}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			pos = Pos{path, pe.Position.Line, pe.Position.Col}
		}
		f.SyntaxError = &ParseError{Pos: pos, Reason: "not valid TOML: every release ignores the whole file (" + tomlReason(err) + ")"}
		return f
	}
	f.doc = doc
	root, ok := parseTOMLPositions(data)
	if !ok {
		f.NoPositions = true
	}
	var tables []*tnode
	if m := root.get("rule"); ok && m != nil {
		tables = m.val.items
	}
	rules, _ := doc["rule"].([]map[string]any)
	if rules == nil {
		if list, ok := doc["rule"].([]any); ok {
			for _, r := range list {
				if t, ok := r.(map[string]any); ok {
					rules = append(rules, t)
				}
			}
		}
	}
	if len(tables) != len(rules) {
		f.NoPositions, tables = true, nil
	}
	switch c := doc["safety_checker"].(type) {
	case []map[string]any:
		for _, x := range c {
			f.checkers = append(f.checkers, x)
		}
	case []any:
		f.checkers = c
	}
	f.Checkers = len(f.checkers)
	for i, raw := range rules {
		r := &PolicyRule{Index: i, Pos: Pos{path, 1, 1}, raw: raw, insertAt: -1}
		var t *tnode
		if tables != nil {
			t = tables[i]
			r.Pos = posIn(path, data, t.start)
			r.inline = t.inline
			r.insertAt, r.indent = t.insertAt, t.indent
		}
		f.readRule(r, t)
		f.Rules = append(f.Rules, r)
	}
	return f
}

// tomlReason is the decoder's message without the file's text.
func tomlReason(err error) string {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := pe.Message
		if i := strings.IndexAny(msg, "'\""); i >= 0 {
			msg = strings.TrimSpace(msg[:i])
		}
		return strings.TrimSuffix(msg, ":")
	}
	return "syntax error"
}

// readRule fills r from its decoded table and, when known, its located table t.
func (f *PolicyFile) readRule(r *PolicyRule, t *tnode) {
	str := func(key string, n *tnode, idx int, v string) Entry {
		e := Entry{Value: v, Key: key, Index: idx, Pos: r.Pos, Start: -1, End: -1}
		if n != nil && n.kind == tStr && n.str == v {
			e.Pos, e.Start, e.End = posIn(f.Path, f.Data, n.start), n.start, n.end
		} else if t != nil {
			f.NoPositions = true
		}
		return e
	}
	var tm *tmember
	if t != nil {
		tm = t.get("toolName")
	}
	switch v := r.raw["toolName"].(type) {
	case string:
		var n *tnode
		if tm != nil {
			n = tm.val
			r.keyStart = tm.keyStart
			if !r.inline {
				r.insertAt = tm.lineStart
				r.indent = indentOf(f.Data, tm.lineStart)
			}
		}
		r.ToolNames = []Entry{str("toolName", n, 0, v)}
	case []any:
		r.ToolNameList = true
		for i, x := range v {
			s, _ := x.(string)
			var n *tnode
			if tm != nil && tm.val.kind == tArray && i < len(tm.val.items) {
				n = tm.val.items[i]
			}
			r.ToolNames = append(r.ToolNames, str("toolName", n, i, s))
		}
		if tm != nil {
			r.keyStart = tm.keyStart
			if !r.inline {
				r.insertAt = tm.lineStart
				r.indent = indentOf(f.Data, tm.lineStart)
			}
		}
	}
	if v, ok := r.raw["mcpName"].(string); ok {
		var n *tnode
		if t != nil {
			if m := t.get("mcpName"); m != nil {
				n = m.val
			}
		}
		e := str("mcpName", n, 0, v)
		r.MCPName = &e
	}
	r.Decision, _ = r.raw["decision"].(string)
	if p, ok := r.raw["priority"].(int64); ok {
		r.Priority = p
	}
	if ms, ok := r.raw["modes"].([]any); ok {
		for _, m := range ms {
			if s, ok := m.(string); ok {
				r.Modes = append(r.Modes, s)
			}
		}
	}
	if b, ok := r.raw["interactive"].(bool); ok {
		r.Interactive = &b
	}
	r.Subagent, _ = r.raw["subagent"].(string)
	for _, k := range []string{"argsPattern", "commandPrefix", "commandRegex"} {
		if _, ok := r.raw[k]; ok {
			r.ArgsDependent = true
		}
	}
	_, r.Annotations = r.raw["toolAnnotations"]
}

// indentOf is the run of spaces and tabs that starts the line at off.
func indentOf(data []byte, off int) string {
	j := off
	for j < len(data) && (data[j] == ' ' || data[j] == '\t') {
		j++
	}
	return string(data[off:j])
}

// FileCheck is what one release does with a policy file.
type FileCheck struct {
	// Rejected: the release drops every rule of the file (a TOML syntax error, or a schema
	// violation: "Schema validation failed"); Reason says why, Pos where.
	Rejected bool   `json:"rejected"`
	Reason   string `json:"reason,omitempty"`
	Pos      Pos    `json:"pos"`
	// Dropped are the rules a rejection drops (every rule of the file).
	Dropped []*PolicyRule `json:"-"`
	// Ignored: the release does not read policy files for MCP tools (before 0.24.0) or not
	// this scope (workspace policies before 0.31.0); IgnoredWhy says which.
	Ignored    bool   `json:"ignored,omitempty"`
	IgnoredWhy string `json:"ignored_why,omitempty"`
	// Warnings are what the release prints and still loads the rules ('The "__" syntax for
	// MCP tools is strictly deprecated'), and the rule errors it reports without dropping the
	// file.
	Warnings []Warning `json:"warnings,omitempty"`
}

// Warning is one message a release prints about a rule, at the rule's value.
type Warning struct {
	Pos
	Rule    int    `json:"rule"`
	Message string `json:"message"`
}

// approvalModes are the values "modes" accepts (policy/types.ts ApprovalMode).
var approvalModes = []string{"default", "autoEdit", "yolo", "plan"}

// Check says what release r does with the file (toml-loader.ts loadPoliciesFromToml of that
// release; see Features).
func (f *PolicyFile) Check(r Release) FileCheck {
	feat := FeaturesOf(r)
	fc := FileCheck{Pos: Pos{f.Path, 1, 1}}
	switch {
	case feat.Policy == PolicyNone:
		fc.Ignored, fc.IgnoredWhy = true, fmt.Sprintf("Gemini CLI %s does not apply policy files to tool calls (from 0.24.0 on)", r)
		return fc
	case f.Scope == ScopeWorkspace && !feat.WorkspacePolicies:
		fc.Ignored, fc.IgnoredWhy = true, fmt.Sprintf("Gemini CLI %s reads no workspace policies (from 0.31.0 on)", r)
		return fc
	case f.SyntaxError != nil:
		fc.Rejected, fc.Reason, fc.Pos, fc.Dropped = true, f.SyntaxError.Reason, f.SyntaxError.Pos, f.Rules
		return fc
	}
	if reason, pos, bad := f.schema(feat); bad {
		fc.Rejected, fc.Pos, fc.Dropped = true, pos, f.Rules
		fc.Reason = fmt.Sprintf("Schema validation failed: %s; Gemini CLI %s drops every rule of the file", reason, r)
		return fc
	}
	for _, rule := range f.Rules {
		if rule.ArgsDependent {
			if _, pfx := rule.raw["commandPrefix"]; pfx || rule.raw["commandRegex"] != nil {
				if len(rule.ToolNames) != 1 || rule.ToolNames[0].Value != "run_shell_command" || rule.ToolNameList {
					fc.Warnings = append(fc.Warnings, Warning{Pos: rule.Pos, Rule: rule.Index,
						Message: fmt.Sprintf(`Rule #%d: commandPrefix and commandRegex can only be used with toolName = "run_shell_command"`, rule.Index+1)})
				}
			}
		}
		for _, t := range rule.ToolNames {
			switch {
			case t.Value == "":
				fc.Warnings = append(fc.Warnings, Warning{Pos: t.Pos, Rule: rule.Index,
					Message: fmt.Sprintf("Rule #%d contains an empty toolName string. Use \"*\" to match all tools.", rule.Index+1)})
			case feat.WarnsDoubleUnderscore && strings.Contains(t.Value, "__"):
				fc.Warnings = append(fc.Warnings, Warning{Pos: t.Pos, Rule: rule.Index,
					Message: fmt.Sprintf(`Rule #%d: The "__" syntax for MCP tools is strictly deprecated. Please use the 'mcpName = "..."' property or the 'mcp_server_tool' format instead.`, rule.Index+1)})
			}
		}
	}
	return fc
}

// schema is the release's zod schema of the file (PolicyFileSchema): the first violation, and
// where.
func (f *PolicyFile) schema(feat Features) (reason string, pos Pos, bad bool) {
	filePos := Pos{f.Path, 1, 1}
	switch v := f.doc["rule"].(type) {
	case nil, []map[string]any:
	case []any:
		for i, x := range v {
			if _, ok := x.(map[string]any); !ok {
				return fmt.Sprintf("rule #%d is not a table", i+1), filePos, true
			}
		}
	default:
		return `"rule" is not a list of tables`, filePos, true
	}
	for _, r := range f.Rules {
		if name, msg := ruleSchema(r, feat); name != "" {
			return fmt.Sprintf("rule #%d, field %q: %s", r.Index+1, name, msg), r.Pos, true
		}
	}
	for i, c := range f.checkers {
		if msg := checkerSchema(c, feat); msg != "" {
			return fmt.Sprintf("safety_checker #%d%s", i+1, msg), filePos, true
		}
	}
	return "", Pos{}, false
}

// isStr, isBool, strOrList and optional are the zod checks PolicyFileSchema uses.
func isStr(v any) bool  { _, ok := v.(string); return ok }
func isBool(v any) bool { _, ok := v.(bool); return ok }

// strOrList: a string or a list of strings.
func strOrList(v any) bool {
	if isStr(v) {
		return true
	}
	l, ok := v.([]any)
	if !ok {
		return false
	}
	for _, x := range l {
		if !isStr(x) {
			return false
		}
	}
	return true
}

// optional: key absent, or its value passes ok.
func optional(m map[string]any, key string, ok func(any) bool) bool {
	v, has := m[key]
	return !has || ok(v)
}

// ruleSchema is the first field of one [[rule]] table the release's schema rejects, and why
// ("" when it passes). A whole-number float priority is kept as r.Priority.
func ruleSchema(r *PolicyRule, feat Features) (field, msg string) {
	m := r.raw
	if _, has := m["toolName"]; !has && feat.ToolNameRequired {
		return "toolName", "required"
	}
	if !optional(m, "toolName", strOrList) {
		return "toolName", "must be a string or a list of strings"
	}
	for _, k := range []string{"mcpName", "argsPattern", "commandRegex", "subagent", "denyMessage", "deny_message"} {
		if !optional(m, k, isStr) {
			return k, "must be a string"
		}
	}
	if !optional(m, "commandPrefix", strOrList) {
		return "commandPrefix", "must be a string or a list of strings"
	}
	d, has := m["decision"]
	if !has {
		return "decision", "required"
	}
	if s, ok := d.(string); !ok || (s != "allow" && s != "deny" && s != "ask_user") {
		return "decision", `must be "allow", "deny" or "ask_user"`
	}
	if msg := prioritySchema(r, m); msg != "" {
		return "priority", msg
	}
	if ms, has := m["modes"]; has {
		l, ok := ms.([]any)
		if !ok {
			return "modes", "must be a list"
		}
		for _, x := range l {
			if s, ok := x.(string); !ok || !slices.Contains(approvalModes, s) {
				return "modes", `each mode must be "default", "autoEdit", "yolo" or "plan"`
			}
		}
	}
	for _, k := range []string{"interactive", "allowRedirection", "allow_redirection"} {
		if !optional(m, k, isBool) {
			return k, "must be a boolean"
		}
	}
	if a, has := m["toolAnnotations"]; has {
		if _, ok := a.(map[string]any); !ok {
			return "toolAnnotations", "must be a table"
		}
	}
	return "", ""
}

// prioritySchema checks a rule's priority (required, an integer from 0 to 999); a float that
// is a whole number is kept as r.Priority.
func prioritySchema(r *PolicyRule, m map[string]any) string {
	p, has := m["priority"]
	switch pv := p.(type) {
	case nil:
		if !has {
			return "priority is required"
		}
	case int64:
		if pv < 0 || pv > 999 {
			return "priority must be >= 0 and <= 999"
		}
	case float64:
		if pv != math.Trunc(pv) {
			return "priority must be an integer"
		}
		if pv < 0 || pv > 999 {
			return "priority must be >= 0 and <= 999"
		}
		r.Priority = int64(pv)
	default:
		return "priority must be a number"
	}
	return ""
}

// checkerSchema is what the schema rejects in one [[safety_checker]] table, as the text after
// "safety_checker #N" ("" when it passes).
func checkerSchema(c any, feat Features) string {
	m, ok := c.(map[string]any)
	if !ok {
		return " is not a table"
	}
	if _, has := m["toolName"]; !has && feat.ToolNameRequired {
		return ", field \"toolName\": required"
	}
	ck, ok := m["checker"].(map[string]any)
	if !ok {
		return ", field \"checker\": required"
	}
	if ty, _ := ck["type"].(string); ty != "in-process" && ty != "external" {
		return ", field \"checker.type\": must be \"in-process\" or \"external\""
	}
	if !isStr(ck["name"]) {
		return ", field \"checker.name\": required"
	}
	return ""
}
