package claude

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"

	"github.com/tailscale/hujson"

	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/permission"
)

// Claude Code's rule files (issue 11 item 4; the shipped code of 1.0.51 and 2.1.332):
//
//	user     <config dir>/settings.json            (~/.claude, or $CLAUDE_CONFIG_DIR)
//	project  <project>/.claude/settings.json
//	local    <project>/.claude/settings.local.json
//	managed  /etc/claude-code/managed-settings.json and managed-settings.d/*.json (Linux),
//	         /Library/Application Support/ClaudeCode/… (macOS),
//	         C:\Program Files\ClaudeCode\… (Windows; 1.0.51: C:\ProgramData\ClaudeCode)
//	legacy   ~/.claude.json projects[<project>].allowedTools (1.0.0; 1.0.51 reads it as allow
//	         rules and moves it into settings.local.json at start-up)
//
// Each file holds permissions.allow / permissions.deny / permissions.ask, arrays of rule
// strings. ~/.claude.json also records per project whether the trust dialog was accepted
// (projects[<dir>].hasTrustDialogAccepted; 1.0.51 also looks at every parent directory).

// RuleFile is one parsed rule file.
type RuleFile struct {
	Path  string
	Scope permission.ClaudeScope
	// Data is the file as read (fix --rules edits these bytes).
	Data  []byte
	Rules []Rule
	// Warnings are entries that are not rules (a list that is not an array, an item that is
	// not a string), with their position.
	Warnings []string
}

// Rule is one rule string of a rule file, located to its JSON string token.
type Rule struct {
	permission.ClaudeRule
	File string
	// Key is where the list is: "permissions.allow", "permissions.deny", "permissions.ask",
	// or `projects["/home/demo/src/lab"].allowedTools` in ~/.claude.json.
	Key   string
	Index int
	// Line and Column (1-based, bytes) of the opening quote.
	Line, Column int
	// Offset and End delimit the JSON string token, quotes included: Data[Offset:End].
	Offset, End int
}

// Where is "file:line:col".
func (r Rule) Where() string { return fmt.Sprintf("%s:%d:%d", r.File, r.Line, r.Column) }

// ParseError is a rule file (or ~/.claude.json) that cannot be read as JSON, with the
// position the parser stopped at. The file's text is never quoted (it may hold secrets).
type ParseError struct {
	Path         string
	Line, Column int
	Reason       string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Column, e.Reason)
}

// (?s): the parser quotes an invalid literal, which may span lines (a string with a raw line
// break); its text is never shown (see below).
var hujsonErr = regexp.MustCompile(`(?s)^hujson: line (\d+), column (\d+): (.*)$`)

func parseError(path string, err error) *ParseError {
	m := hujsonErr.FindStringSubmatch(err.Error())
	if m == nil {
		return &ParseError{Path: path, Line: 1, Column: 1, Reason: "not JSON"}
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	reason := m[3]
	if bytes.HasPrefix([]byte(reason), []byte("invalid literal")) {
		reason = "invalid value starting here; its text is not shown"
	}
	return &ParseError{Path: path, Line: line, Column: col, Reason: "not valid JSON: " + reason}
}

// parseJSON parses data leniently (comments and trailing commas are accepted: hujson), and
// returns the root object.
func parseJSON(path string, data []byte) (*hujson.Object, error) {
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	root, err := hujson.Parse(data)
	if err != nil {
		return nil, parseError(path, err)
	}
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil, &ParseError{Path: path, Line: 1, Column: 1, Reason: "the top-level value is not an object"}
	}
	return obj, nil
}

// member returns the last member named name (JSON.parse keeps the last), or nil.
func member(obj *hujson.Object, name string) *hujson.Value {
	var found *hujson.Value
	for i := range obj.Members {
		if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok && lit.String() == name {
			found = &obj.Members[i].Value
		}
	}
	return found
}

func asString(v *hujson.Value) (string, bool) {
	lit, ok := v.Value.(hujson.Literal)
	if !ok || lit.Kind() != '"' {
		return "", false
	}
	return lit.String(), true
}

type locator struct {
	path string
	data []byte
	nl   []int
	bom  int
}

func newLocator(path string, data []byte) *locator {
	l := &locator{path: path, data: data}
	if bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}) {
		l.bom = 3
	}
	for i, b := range data {
		if b == '\n' {
			l.nl = append(l.nl, i)
		}
	}
	return l
}

func (l *locator) pos(off int) (line, col int) {
	i := sort.SearchInts(l.nl, off)
	if i == 0 {
		return 1, off + 1
	}
	return i + 1, off - l.nl[i-1]
}

// list reads the rule strings of v (an array) into rules of kind and scope.
func (l *locator) list(v *hujson.Value, key string, kind permission.ClaudeKind, scope permission.ClaudeScope, warn *[]string) []Rule {
	if v == nil {
		return nil
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		line, col := l.pos(v.StartOffset + l.bom)
		*warn = append(*warn, fmt.Sprintf("%s:%d:%d: %s is not an array; ignored", l.path, line, col, key))
		return nil
	}
	var out []Rule
	for i := range arr.Elements {
		e := &arr.Elements[i]
		off, end := e.StartOffset+l.bom, e.EndOffset+l.bom
		line, col := l.pos(off)
		s, ok := asString(e)
		if !ok {
			*warn = append(*warn, fmt.Sprintf("%s:%d:%d: %s[%d] is not a string; ignored", l.path, line, col, key, i))
			continue
		}
		out = append(out, Rule{ClaudeRule: permission.ClaudeRule{Text: s, Kind: kind, Scope: scope},
			File: l.path, Key: key, Index: i, Line: line, Column: col, Offset: off, End: end})
	}
	return out
}

// ParseRuleFile reads the permissions lists of a settings file (user, project, local or
// managed scope). A file that is not JSON gives a *ParseError; lists of the wrong type are
// Warnings.
func ParseRuleFile(path string, data []byte, scope permission.ClaudeScope) (*RuleFile, error) {
	obj, err := parseJSON(path, data)
	if err != nil {
		return nil, err
	}
	f := &RuleFile{Path: path, Scope: scope, Data: data}
	l := newLocator(path, data)
	perms := member(obj, "permissions")
	if perms == nil {
		return f, nil
	}
	po, ok := perms.Value.(*hujson.Object)
	if !ok {
		line, col := l.pos(perms.StartOffset + l.bom)
		f.Warnings = append(f.Warnings, fmt.Sprintf("%s:%d:%d: permissions is not an object; ignored", path, line, col))
		return f, nil
	}
	for _, k := range []permission.ClaudeKind{permission.ClaudeAllow, permission.ClaudeDeny, permission.ClaudeAsk} {
		f.Rules = append(f.Rules, l.list(member(po, string(k)), "permissions."+string(k), k, scope, &f.Warnings)...)
	}
	return f, nil
}

// LoadRuleFile reads and parses the file at path.
func LoadRuleFile(path string, scope permission.ClaudeScope) (*RuleFile, error) {
	data, _, err := owner.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseRuleFile(path, data, scope)
}

// GlobalConfig is what the audit reads from ~/.claude.json: per project, the trust flag and the
// legacy allowedTools; the MCP server keys (top level and per project).
type GlobalConfig struct {
	Path string
	Data []byte
	// Origin is who owns the file read (LoadGlobalConfig): its servers get it.
	Origin   mcpconfig.Origin
	Projects map[string]ProjectConfig
	// Servers are the keys of the top-level mcpServers, in file order.
	Servers  []string
	Warnings []string
}

// ProjectConfig is one projects[<dir>] entry.
type ProjectConfig struct {
	// Trusted is hasTrustDialogAccepted (false when absent).
	Trusted bool
	// AllowedTools are the legacy allow rules (scope legacy).
	AllowedTools []Rule
	// Servers are the keys of the project's mcpServers, in file order.
	Servers []string
}

// ParseGlobalConfig reads ~/.claude.json (named path). Only the members above are read;
// nothing else of the file (API key responses, user ids) is kept but Data.
func ParseGlobalConfig(path string, data []byte) (*GlobalConfig, error) {
	obj, err := parseJSON(path, data)
	if err != nil {
		return nil, err
	}
	g := &GlobalConfig{Path: path, Data: data, Projects: map[string]ProjectConfig{}}
	l := newLocator(path, data)
	g.Servers = keys(member(obj, "mcpServers"))
	if pv := member(obj, "projects"); pv != nil {
		if po, ok := pv.Value.(*hujson.Object); ok {
			for i := range po.Members {
				m := &po.Members[i]
				dir, _ := asString(&m.Name)
				p, ok := m.Value.Value.(*hujson.Object)
				if !ok {
					continue
				}
				var pc ProjectConfig
				if t := member(p, "hasTrustDialogAccepted"); t != nil {
					lit, ok := t.Value.(hujson.Literal)
					pc.Trusted = ok && lit.Kind() == 't'
				}
				key := "projects[" + strconv.Quote(dir) + "].allowedTools"
				pc.AllowedTools = l.list(member(p, "allowedTools"), key, permission.ClaudeAllow, permission.ClaudeScopeLegacy, &g.Warnings)
				pc.Servers = keys(member(p, "mcpServers"))
				g.Projects[dir] = pc
			}
		}
	}
	return g, nil
}

// LoadGlobalConfig reads and parses ~/.claude.json at path.
func LoadGlobalConfig(path string) (*GlobalConfig, error) {
	data, origin, err := mcpconfig.ReadFile(path)
	if err != nil {
		return nil, err
	}
	g, err := ParseGlobalConfig(path, data)
	if g != nil {
		g.Origin = origin
	}
	return g, err
}

// Trusted reports whether project dir is trusted: its own entry, else the nearest parent
// directory's, has hasTrustDialogAccepted true (1.0.51: nw0 walks up to the root). found is
// false when no entry of dir or a parent exists.
func (g *GlobalConfig) Trusted(dir string) (trusted, found bool) {
	d := filepath.Clean(dir)
	for {
		if p, ok := g.Projects[d]; ok {
			found = true
			if p.Trusted {
				return true, true
			}
		} else if p, ok := g.Projects[filepath.ToSlash(d)]; ok {
			found = true
			if p.Trusted {
				return true, true
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false, found
		}
		d = parent
	}
}

func keys(v *hujson.Value) []string {
	if v == nil {
		return nil
	}
	o, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil
	}
	var out []string
	for i := range o.Members {
		if k, ok := asString(&o.Members[i].Name); ok {
			out = append(out, k)
		}
	}
	return out
}

// ManagedDir is the directory of Claude Code's file-based managed settings on goos
// ("linux", "darwin", "windows"; others: the Linux path): /etc/claude-code,
// /Library/Application Support/ClaudeCode, C:\Program Files\ClaudeCode (2.1.332's binary;
// 1.0.51 used C:\ProgramData\ClaudeCode, which ManagedFiles also lists on Windows).
func ManagedDir(goos string) string {
	switch goos {
	case "darwin":
		return "/Library/Application Support/ClaudeCode"
	case "windows":
		return `C:\Program Files\ClaudeCode`
	}
	return "/etc/claude-code"
}

// ManagedFiles lists the managed settings files that exist for this system, in merge order:
// managed-settings.json, then managed-settings.d/*.json sorted by name (2.1.332's drop-in
// directory), for ManagedDir(runtime.GOOS) (and on Windows the 1.0.51 directory).
func ManagedFiles() []string {
	dirs := []string{ManagedDir(runtime.GOOS)}
	if runtime.GOOS == "windows" {
		dirs = append(dirs, `C:\ProgramData\ClaudeCode`)
	}
	var out []string
	for _, d := range dirs {
		out = append(out, ManagedFilesIn(d)...)
	}
	return out
}

// ManagedFilesIn lists dir/managed-settings.json and dir/managed-settings.d/*.json that exist.
func ManagedFilesIn(dir string) []string {
	var out []string
	if fi, err := os.Stat(filepath.Join(dir, "managed-settings.json")); err == nil && !fi.IsDir() {
		out = append(out, filepath.Join(dir, "managed-settings.json"))
	}
	drop, _ := filepath.Glob(filepath.Join(dir, "managed-settings.d", "*.json"))
	sort.Strings(drop)
	return append(out, drop...)
}
