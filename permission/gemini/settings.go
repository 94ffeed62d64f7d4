package gemini

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"

	"github.com/tailscale/hujson"
)

// Scope is where a rule file sits, in the CLI's precedence: system defaults < user < workspace <
// system for settings (cli settings.ts mergeSettings), and workspace < user < system (admin) for
// policy files (policy/config.ts tiers).
type Scope string

// The scopes.
const (
	ScopeSystemDefaults Scope = "system-defaults" // system-defaults.json ($GEMINI_CLI_SYSTEM_DEFAULTS_PATH)
	ScopeUser           Scope = "user"            // ~/.gemini/settings.json, ~/.gemini/policies/
	ScopeWorkspace      Scope = "workspace"       // <project>/.gemini/settings.json, <project>/.gemini/policies/
	ScopeSystem         Scope = "system"          // /etc/gemini-cli/settings.json ($GEMINI_CLI_SYSTEM_SETTINGS_PATH), /etc/gemini-cli/policies/ (admin tier)
)

// settingsRank orders settings scopes: a higher one overrides (replace and shallow-merge keys).
func settingsRank(s Scope) int {
	switch s {
	case ScopeSystemDefaults:
		return 0
	case ScopeUser:
		return 1
	case ScopeWorkspace:
		return 2
	case ScopeSystem:
		return 3
	}
	return 1
}

// Pos is a place in a rule file: 1-based line, 1-based column in bytes.
type Pos struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"column"`
}

// String is "file:line:col".
func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// ParseError is a rule file the CLI cannot read at all, at the position of the problem. Its
// message never quotes the file's text (a settings file holds secrets).
type ParseError struct {
	Pos
	Reason string
}

func (e *ParseError) Error() string { return e.Pos.String() + ": " + e.Reason }

// Entry is one string of a rule list, located to its token: Start and End delimit the token in
// the file's bytes, quotes included (a rewrite replaces exactly Data[Start:End]).
type Entry struct {
	Value string `json:"value"`
	// Key says where the list is: "tools.exclude", "tools.allowed", "tools.core",
	// "tools.confirmationRequired",
	// "excludeTools" (top level, settings format v1), `mcpServers["foo.bar"].excludeTools`,
	// `mcpServers["foo.bar"].includeTools`, "mcp.excluded"; a policy file's "toolName" or
	// "mcpName".
	Key   string `json:"key"`
	Index int    `json:"index"`
	Pos
	Start int `json:"-"`
	End   int `json:"-"`
}

// Server is one mcpServers member of a settings file, reduced to its tool rules.
type Server struct {
	Key string `json:"key"`
	Pos
	Trust bool `json:"trust"`
	// Include is includeTools (HasInclude: the list is present, possibly empty: no tool then),
	// Exclude excludeTools; both name raw tools (mcp-client.ts isEnabled: an exact name, or an
	// include entry "<tool>(…").
	Include    []Entry `json:"include_tools"`
	HasInclude bool    `json:"-"`
	Exclude    []Entry `json:"exclude_tools"`
}

// SettingsFile is the tool rules of one settings.json.
type SettingsFile struct {
	Path  string `json:"path"`
	Scope Scope  `json:"scope"`
	Data  []byte `json:"-"`
	// Exclude is tools.exclude, Allowed tools.allowed, Core tools.core, Confirm
	// tools.confirmationRequired (Has*: the key is present); LegacyExclude the top-level
	// excludeTools of settings format v1.
	Exclude       []Entry `json:"exclude"`
	Allowed       []Entry `json:"allowed"`
	HasAllowed    bool    `json:"-"`
	Core          []Entry `json:"core"`
	HasCore       bool    `json:"-"`
	Confirm       []Entry `json:"confirmation_required"`
	HasConfirm    bool    `json:"-"`
	LegacyExclude []Entry `json:"legacy_exclude"`
	// Servers are the mcpServers members in file order (a repeated key keeps the last one).
	Servers []Server `json:"servers"`
	// MCPExcluded is mcp.excluded (server keys whose tools are all off).
	MCPExcluded []Entry `json:"mcp_excluded"`
	// Warnings are entries that are no rule (not a string, not a list) with their position.
	Warnings []string `json:"warnings"`
}

var hujsonErr = regexp.MustCompile(`^hujson: line (\d+), column (\d+): `)

// ParseSettings reads the tool rules of a settings.json (JSON with // and /* */ comments, as
// the CLI's strip-json-comments + JSON.parse read it). A file the CLI cannot read (a syntax
// error, a trailing comma, a top-level value that is no object) is a *ParseError at its line
// and column; the CLI then ignores the whole file.
func ParseSettings(path string, data []byte, scope Scope) (*SettingsFile, error) {
	f := &SettingsFile{Path: path, Scope: scope, Data: data}
	if bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}) {
		return nil, &ParseError{Pos: Pos{path, 1, 1}, Reason: "file starts with a UTF-8 byte order mark: JSON.parse rejects it and Gemini CLI ignores the whole file"}
	}
	root, err := hujson.Parse(data)
	if err != nil {
		pos := Pos{path, 1, 1}
		if m := hujsonErr.FindStringSubmatch(err.Error()); m != nil {
			pos.Line, _ = strconv.Atoi(m[1])
			pos.Col, _ = strconv.Atoi(m[2])
		}
		return nil, &ParseError{Pos: pos, Reason: "not valid JSON (comments allowed): Gemini CLI ignores the whole file"}
	}
	if off, ok := trailingComma(&root); ok {
		return nil, &ParseError{Pos: f.pos(off), Reason: "trailing comma: Gemini CLI's JSON.parse rejects it and ignores the whole file"}
	}
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil, &ParseError{Pos: f.pos(root.StartOffset), Reason: "settings file is not a JSON object"}
	}
	if tools := f.object(member(obj, "tools"), "tools"); tools != nil {
		f.Exclude, _ = f.list(member(tools, "exclude"), "tools.exclude")
		f.Allowed, f.HasAllowed = f.list(member(tools, "allowed"), "tools.allowed")
		f.Core, f.HasCore = f.list(member(tools, "core"), "tools.core")
		f.Confirm, f.HasConfirm = f.list(member(tools, "confirmationRequired"), "tools.confirmationRequired")
	}
	f.LegacyExclude, _ = f.list(member(obj, "excludeTools"), "excludeTools")
	if mcp := f.object(member(obj, "mcp"), "mcp"); mcp != nil {
		f.MCPExcluded, _ = f.list(member(mcp, "excluded"), "mcp.excluded")
	}
	if servers := f.object(member(obj, "mcpServers"), "mcpServers"); servers != nil {
		seen := map[string]int{}
		for i := range servers.Members {
			m := &servers.Members[i]
			key := literalString(m.Name.Value)
			keyPath := fmt.Sprintf("mcpServers[%s]", strconv.Quote(key))
			so, ok := m.Value.Value.(*hujson.Object)
			if !ok {
				f.warn(m.Value.StartOffset, "%s is not an object: ignored", keyPath)
				continue
			}
			s := Server{Key: key, Pos: f.pos(m.Name.StartOffset)}
			if t := member(so, "trust"); t != nil {
				if lit, ok := t.Value.(hujson.Literal); ok && lit.Kind() == 't' {
					s.Trust = true
				}
			}
			s.Include, s.HasInclude = f.list(member(so, "includeTools"), keyPath+".includeTools")
			s.Exclude, _ = f.list(member(so, "excludeTools"), keyPath+".excludeTools")
			if j, dup := seen[key]; dup {
				f.Servers[j] = s // JSON.parse keeps the last definition
				continue
			}
			seen[key] = len(f.Servers)
			f.Servers = append(f.Servers, s)
		}
	}
	return f, nil
}

// member returns the value of the last member named name (JSON.parse keeps the last), or nil.
func member(obj *hujson.Object, name string) *hujson.Value {
	if obj == nil {
		return nil
	}
	var out *hujson.Value
	for i := range obj.Members {
		if literalString(obj.Members[i].Name.Value) == name {
			out = &obj.Members[i].Value
		}
	}
	return out
}

func literalString(v hujson.ValueTrimmed) string {
	if lit, ok := v.(hujson.Literal); ok {
		return lit.String()
	}
	return ""
}

// object is v as an object; a value of another type is a warning (nil).
func (f *SettingsFile) object(v *hujson.Value, key string) *hujson.Object {
	if v == nil {
		return nil
	}
	o, ok := v.Value.(*hujson.Object)
	if !ok {
		f.warn(v.StartOffset, "%s is not an object: ignored", key)
		return nil
	}
	return o
}

// list reads a list of strings; present reports whether the key is there with an array.
func (f *SettingsFile) list(v *hujson.Value, key string) (out []Entry, present bool) {
	if v == nil {
		return nil, false
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		f.warn(v.StartOffset, "%s is not a list: ignored", key)
		return nil, false
	}
	for i := range arr.Elements {
		e := &arr.Elements[i]
		lit, ok := e.Value.(hujson.Literal)
		if !ok || lit.Kind() != '"' {
			f.warn(e.StartOffset, "%s[%d] is not a string: ignored", key, i)
			continue
		}
		out = append(out, Entry{Value: lit.String(), Key: key, Index: i, Pos: f.pos(e.StartOffset), Start: e.StartOffset, End: e.EndOffset})
	}
	return out, true
}

func (f *SettingsFile) warn(off int, format string, args ...any) {
	f.Warnings = append(f.Warnings, f.pos(off).String()+": "+fmt.Sprintf(format, args...))
}

func (f *SettingsFile) pos(off int) Pos { return posIn(f.Path, f.Data, off) }

// posIn is the line and byte column of offset off in data.
func posIn(path string, data []byte, off int) Pos {
	off = min(max(off, 0), len(data))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return Pos{File: path, Line: line, Col: col}
}

// trailingComma returns the offset of the first trailing comma in v (hujson accepts them and
// records one as a non-nil AfterExtra on the last member or element; JSON.parse does not).
func trailingComma(v *hujson.Value) (int, bool) {
	best, found := 0, false
	for x := range v.All() {
		var last *hujson.Value
		switch c := x.Value.(type) {
		case *hujson.Object:
			if n := len(c.Members); n > 0 {
				last = &c.Members[n-1].Value
			}
		case *hujson.Array:
			if n := len(c.Elements); n > 0 {
				last = &c.Elements[n-1]
			}
		}
		if last != nil && last.AfterExtra != nil {
			off := last.EndOffset + len(last.AfterExtra)
			if !found || off < best {
				best, found = off, true
			}
		}
	}
	return best, found
}
