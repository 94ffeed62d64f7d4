package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Load reads and parses one settings file. env drives $VAR expansion (nil: nothing is
// expanded). A missing file yields an error wrapping fs.ErrNotExist; a file that is not
// usable yields a *ParseError (see Parse).
func Load(path string, scope Scope, env Env) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read settings %s: %w", path, err)
	}
	return Parse(path, data, scope, env)
}

// LoadSource loads src. A missing Optional file is not an error: it returns nil, nil.
func LoadSource(src Source, env Env) (*File, error) {
	f, err := Load(src.Path, src.Scope, env)
	if err != nil && src.Optional && errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return f, err
}

// LoadAll loads every source in order. Missing optional files are skipped; every other
// failure is collected and the remaining sources are still loaded. The files come back in
// the order of sources.
func LoadAll(sources []Source, env Env) ([]*File, []error) {
	var files []*File
	var errs []error
	for _, src := range sources {
		f, err := LoadSource(src, env)
		switch {
		case err != nil:
			errs = append(errs, err)
		case f != nil:
			files = append(files, f)
		}
	}
	return files, errs
}

// Parse parses the bytes of a settings file named path.
//
// Accepted: JSON with // and /* */ comments, LF or CRLF line ends. Rejected with a
// *ParseError, as Qwen Code's strip-json-comments + JSON.parse reject them (the file is then
// not in effect in Qwen Code): a UTF-8 BOM (ErrByteOrderMark), a trailing comma
// (ErrTrailingComma), any other syntax error (ErrSyntax), a top-level value that is not an
// object (ErrNotObject). Values of the wrong type inside the object (a rule list that is not
// an array, a rule that is not a string) are skipped with a Warning.
func Parse(path string, data []byte, scope Scope, env Env) (*File, error) {
	p := &parser{path: path, data: data, env: env, nl: newlineIndex(data)}
	if bytes.HasPrefix(data, utf8BOM) {
		return nil, p.errorAt(0, ErrByteOrderMark,
			"file starts with a UTF-8 byte order mark; Qwen Code's JSON.parse rejects it and ignores the whole file")
	}
	root, err := hujson.Parse(data)
	if err != nil {
		if off, ok := unterminatedString(data); ok {
			return nil, p.errorAt(off, fmt.Errorf("%w: %w", ErrSyntax, err),
				"string is not closed on its line")
		}
		return nil, p.syntaxError(err)
	}
	if off, ok := firstTrailingComma(&root); ok {
		return nil, p.errorAt(off, ErrTrailingComma,
			"trailing comma; Qwen Code does not accept trailing commas and ignores the whole file")
	}
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil, p.errorAt(root.StartOffset, ErrNotObject, "settings file is not a JSON object")
	}
	p.f = &File{Path: path, Scope: scope}
	p.readFile(obj)
	sort.SliceStable(p.f.Rules, func(i, j int) bool { return p.f.Rules[i].Offset < p.f.Rules[j].Offset })
	return p.f, nil
}

type parser struct {
	path string
	data []byte
	env  Env
	nl   []int // offsets of '\n'
	f    *File
}

// newlineIndex returns the offsets of every '\n' in data.
func newlineIndex(data []byte) []int {
	var nl []int
	for i, b := range data {
		if b == '\n' {
			nl = append(nl, i)
		}
	}
	return nl
}

// pos converts a byte offset into a 1-based line and byte column.
func (p *parser) pos(off int) (line, col int) {
	return lineCol(p.nl, off)
}

func lineCol(nl []int, off int) (line, col int) {
	i := sort.SearchInts(nl, off) // newlines before off
	if i == 0 {
		return 1, off + 1
	}
	return i + 1, off - nl[i-1]
}

func (p *parser) errorAt(off int, cause error, reason string) *ParseError {
	line, col := p.pos(off)
	return &ParseError{Path: p.path, Line: line, Column: col, Reason: reason, Err: cause}
}

// (?s): the message may span lines (an invalid literal quoted whole, a string with a raw line
// break in an inventory); without it such a message lost its position and was shown as it was.
var hujsonErrPattern = regexp.MustCompile(`(?s)^hujson: line (\d+), column (\d+): (.*)$`)

// syntaxError turns a hujson error ("hujson: line L, column C: msg") into a ParseError. The
// parser's message quotes a bad literal whole ("invalid literal: \"sk-…\q\""), and a settings
// string may be a secret (an env value, a header): the reason says what is wrong and the
// position says where, the text is never repeated, and the parser's error is not kept as the
// cause (issue 9 item 9).
func (p *parser) syntaxError(err error) *ParseError {
	m := hujsonErrPattern.FindStringSubmatch(err.Error())
	if m == nil {
		reason := safeSyntaxReason(strings.TrimPrefix(err.Error(), "hujson: "))
		return &ParseError{Path: p.path, Line: 1, Column: 1, Reason: reason, Err: fmt.Errorf("%w: %s", ErrSyntax, reason)}
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	reason := safeSyntaxReason(m[3])
	return &ParseError{Path: p.path, Line: line, Column: col, Reason: reason, Err: fmt.Errorf("%w: %s", ErrSyntax, reason)}
}

// SyntaxError is the *ParseError for a hujson parse error of the file at path, worded as
// settings' own (syntaxError): the file's text is never quoted. For other hand-written JSON
// inputs of ours (an inventory).
func SyntaxError(path string, err error) *ParseError {
	return (&parser{path: path}).syntaxError(err)
}

// safeSyntaxReason rewrites a hujson message that quotes the file's text ("invalid literal:
// <text>") into one that does not; other messages quote at most one character and are kept.
func safeSyntaxReason(msg string) string {
	lit, ok := strings.CutPrefix(msg, "invalid literal: ")
	switch {
	case !ok:
		return msg
	case strings.HasPrefix(lit, `"`):
		return `invalid string starting here (a bad escape such as \q, or a control character such as a tab); its text is not shown`
	default:
		return "invalid value starting here (not a string, number, true, false or null); its text is not shown"
	}
}

// unterminatedString finds the first JSON string that reaches a line end or the end of the
// data before its closing quote (JSON forbids raw line breaks in strings), skipping
// comments. The parser reports such a string only at the end of the file; the opening quote
// is where the user has to look.
func unterminatedString(data []byte) (int, bool) {
	for i := 0; i < len(data); i++ {
		switch {
		case data[i] == '"':
			start := i
			for i++; ; i++ {
				if i >= len(data) || data[i] == '\n' || data[i] == '\r' {
					return start, true
				}
				if data[i] == '\\' {
					i++
					continue
				}
				if data[i] == '"' {
					break
				}
			}
		case data[i] == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
		case data[i] == '/' && i+1 < len(data) && data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				return 0, false
			}
			i += 2 + end + 1
		}
	}
	return 0, false
}

// firstTrailingComma returns the offset of the first trailing comma in v (hujson records one
// as a non-nil AfterExtra on the last member or element).
func firstTrailingComma(v *hujson.Value) (int, bool) {
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

func (p *parser) warn(off int, format string, args ...any) {
	line, col := p.pos(off)
	p.f.Warnings = append(p.f.Warnings, Warning{Path: p.path, Line: line, Column: col, Message: fmt.Sprintf(format, args...)})
}

// member returns the value of the last member named name (JSON.parse keeps the last), and
// warns when the key is repeated. keyPath is only used in the warning.
func (p *parser) member(obj *hujson.Object, name, keyPath string) *hujson.Value {
	var found *hujson.Value
	n := 0
	for i := range obj.Members {
		m := &obj.Members[i]
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			found = &m.Value
			n++
		}
	}
	if n > 1 {
		p.warn(found.StartOffset, "%s: key appears %d times; Qwen Code uses the last one", keyPath, n)
	}
	return found
}

// object returns v as an object, warning when v is present with another type.
func (p *parser) object(v *hujson.Value, keyPath string) *hujson.Object {
	if v == nil {
		return nil
	}
	o, ok := v.Value.(*hujson.Object)
	if !ok {
		p.warn(v.StartOffset, "%s: not an object; ignored", keyPath)
		return nil
	}
	return o
}

func (p *parser) origin(key string, index int, v *hujson.Value) Origin {
	line, col := p.pos(v.StartOffset)
	return Origin{File: p.path, Scope: p.f.Scope, Key: key, Index: index,
		Offset: v.StartOffset, End: v.EndOffset, Line: line, Column: col}
}

// str returns the decoded string of v and whether v is a JSON string.
func str(v *hujson.Value) (string, bool) {
	lit, ok := v.Value.(hujson.Literal)
	if !ok || lit.Kind() != '"' {
		return "", false
	}
	return lit.String(), true
}

// stringField reads an optional string member, expanded. Returns "" when absent.
func (p *parser) stringField(obj *hujson.Object, name, keyPath string) string {
	v := p.member(obj, name, keyPath)
	if v == nil {
		return ""
	}
	s, ok := str(v)
	if !ok {
		p.warn(v.StartOffset, "%s: not a string; ignored", keyPath)
		return ""
	}
	return Expand(s, p.env)
}

// boolField reads an optional boolean member.
func (p *parser) boolField(obj *hujson.Object, name, keyPath string) *bool {
	v := p.member(obj, name, keyPath)
	if v == nil {
		return nil
	}
	lit, ok := v.Value.(hujson.Literal)
	if !ok || (lit.Kind() != 't' && lit.Kind() != 'f') {
		p.warn(v.StartOffset, "%s: not a boolean; ignored", keyPath)
		return nil
	}
	b := lit.Bool()
	return &b
}

// ruleList records every string element of the array v as a Rule.
func (p *parser) ruleList(v *hujson.Value, key string, kind Kind, server string, v1 bool, ignored string) []Rule {
	if v == nil {
		return nil
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		p.warn(v.StartOffset, "%s: not an array; ignored", key)
		return nil
	}
	p.f.Lists = append(p.f.Lists, key)
	var out []Rule
	for i := range arr.Elements {
		e := &arr.Elements[i]
		s, ok := str(e)
		if !ok {
			p.warn(e.StartOffset, "%s[%d]: not a string; ignored", key, i)
			continue
		}
		r := Rule{Origin: p.origin(key, i, e), Kind: kind, Server: server,
			Literal: s, Expanded: Expand(s, p.env), V1: v1, Ignored: ignored}
		out = append(out, r)
		p.f.Rules = append(p.f.Rules, r)
	}
	return out
}

// v1Keys are the v1 flat keys that hold rule-like lists, with the v2 key they migrate to
// (migration/versions/v1-to-v2.ts).
var v1Keys = []struct {
	key  string
	kind Kind
}{
	{"allowedTools", KindAllow},            // → tools.allowed
	{"excludeTools", KindDeny},             // → tools.exclude
	{"coreTools", KindCore},                // → tools.core
	{"allowMCPServers", KindMCPAllowed},    // → mcp.allowed
	{"excludeMCPServers", KindMCPExcluded}, // → mcp.excluded
}

func (p *parser) readFile(root *hujson.Object) {
	f := p.f
	if v := p.member(root, "$version", "$version"); v != nil {
		if lit, ok := v.Value.(hujson.Literal); ok && lit.Kind() == '0' {
			if x := lit.Float(); x == math.Trunc(x) && !math.IsInf(x, 0) {
				f.Version, f.HasVersion = int(x), true
			}
		}
		if !f.HasVersion {
			p.warn(v.StartOffset, "$version: not an integer; Qwen Code treats the file as unversioned")
		}
	}
	f.V1 = !f.HasVersion || f.Version < 2

	if perms := p.object(p.member(root, "permissions", "permissions"), "permissions"); perms != nil {
		p.ruleList(p.member(perms, "allow", "permissions.allow"), "permissions.allow", KindAllow, "", false, "")
		p.ruleList(p.member(perms, "ask", "permissions.ask"), "permissions.ask", KindAsk, "", false, "")
		p.ruleList(p.member(perms, "deny", "permissions.deny"), "permissions.deny", KindDeny, "", false, "")
	}
	if tools := p.object(p.member(root, "tools", "tools"), "tools"); tools != nil {
		p.ruleList(p.member(tools, "allowed", "tools.allowed"), "tools.allowed", KindAllow, "", false, "")
		p.ruleList(p.member(tools, "exclude", "tools.exclude"), "tools.exclude", KindDeny, "", false, "")
		p.ruleList(p.member(tools, "disabled", "tools.disabled"), "tools.disabled", KindDisabled, "", false, "")
		p.ruleList(p.member(tools, "core", "tools.core"), "tools.core", KindCore, "", false, "")
		f.ApprovalMode = p.stringField(tools, "approvalMode", "tools.approvalMode")
	}
	if mcp := p.object(p.member(root, "mcp", "mcp"), "mcp"); mcp != nil {
		p.ruleList(p.member(mcp, "allowed", "mcp.allowed"), "mcp.allowed", KindMCPAllowed, "", false, "")
		p.ruleList(p.member(mcp, "excluded", "mcp.excluded"), "mcp.excluded", KindMCPExcluded, "", false, "")
	}
	if sec := p.object(p.member(root, "security", "security"), "security"); sec != nil {
		if ft := p.object(p.member(sec, "folderTrust", "security.folderTrust"), "security.folderTrust"); ft != nil {
			f.FolderTrust = p.boolField(ft, "enabled", "security.folderTrust.enabled")
		}
	}

	ignored := ""
	if !f.V1 {
		ignored = fmt.Sprintf("v1 key in a file with \"$version\": %d; Qwen Code ignores it", f.Version)
	}
	for _, k := range v1Keys {
		v := p.member(root, k.key, k.key)
		if v == nil {
			continue
		}
		if ignored != "" {
			p.warn(v.StartOffset, "%s: %s", k.key, ignored)
		}
		p.ruleList(v, k.key, k.kind, "", true, ignored)
	}
	if f.V1 {
		if m := p.stringField(root, "approvalMode", "approvalMode"); m != "" && f.ApprovalMode == "" {
			f.ApprovalMode = m
		}
		if b := p.boolField(root, "folderTrust", "folderTrust"); b != nil && f.FolderTrust == nil {
			f.FolderTrust = b
		}
	}

	if servers := p.object(p.member(root, "mcpServers", "mcpServers"), "mcpServers"); servers != nil {
		p.readServers(servers)
	}
}

// ServerKeyPath is the settings key path of an mcpServers entry as reports print it:
// "mcpServers.lit", and "mcpServers.\"foo.bar\"" for a key holding a dot, a quote, a space or
// brackets (or an empty key), so mcpServers."foo.bar".excludeTools cannot be read as the key
// "foo" with a member "bar". Quoting follows JSON string syntax (strconv.Quote).
func ServerKeyPath(key string) string {
	if key == "" || strings.ContainsAny(key, ". \t\"'[]\\") || strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 }) {
		return "mcpServers." + strconv.Quote(key)
	}
	return "mcpServers." + key
}

func (p *parser) readServers(servers *hujson.Object) {
	seen := map[string]int{} // key -> index in f.MCPServers (last definition wins)
	for i := range servers.Members {
		m := &servers.Members[i]
		key, _ := str(&m.Name)
		keyPath := ServerKeyPath(key)
		o, ok := m.Value.Value.(*hujson.Object)
		if !ok {
			p.warn(m.Value.StartOffset, "%s: not an object; ignored", keyPath)
			continue
		}
		s := MCPServer{Key: key, Origin: p.origin(keyPath, -1, &m.Name)}
		s.Command = p.stringField(o, "command", keyPath+".command")
		s.Cwd = p.stringField(o, "cwd", keyPath+".cwd")
		s.Type = p.stringField(o, "type", keyPath+".type")
		if u := p.stringField(o, "httpUrl", keyPath+".httpUrl"); u != "" {
			s.URL, s.URLKey = u, "httpUrl"
		} else if u := p.stringField(o, "url", keyPath+".url"); u != "" {
			s.URL, s.URLKey = u, "url"
		}
		switch {
		case s.URLKey == "httpUrl":
			s.Transport = TransportHTTP
		case s.URLKey == "url" && s.Type == "sse":
			s.Transport = TransportSSE
		case s.URLKey == "url":
			s.Transport = TransportHTTP
		case s.Command != "":
			s.Transport = TransportStdio
		}
		if t := p.boolField(o, "trust", keyPath+".trust"); t != nil {
			s.Trust = *t
		}
		if v := p.member(o, "timeout", keyPath+".timeout"); v != nil {
			if lit, ok := v.Value.(hujson.Literal); ok && lit.Kind() == '0' {
				s.TimeoutMS = int64(lit.Float())
			} else {
				p.warn(v.StartOffset, "%s.timeout: not a number; ignored", keyPath)
			}
		}
		s.Args = p.secretList(p.member(o, "args", keyPath+".args"), keyPath+".args")
		s.Env = p.secretMap(p.member(o, "env", keyPath+".env"), keyPath+".env")
		s.Headers = p.secretMap(p.member(o, "headers", keyPath+".headers"), keyPath+".headers")
		s.IncludeTools = p.ruleList(p.member(o, "includeTools", keyPath+".includeTools"),
			keyPath+".includeTools", KindIncludeTools, key, false, "")
		s.ExcludeTools = p.ruleList(p.member(o, "excludeTools", keyPath+".excludeTools"),
			keyPath+".excludeTools", KindExcludeTools, key, false, "")
		if j, dup := seen[key]; dup {
			// JSON.parse keeps the last definition; its entries are the ones in effect.
			p.warn(m.Name.StartOffset, "%s: server key appears more than once; Qwen Code uses the last one", keyPath)
			p.markIgnored(p.f.MCPServers[j], "shadowed by a later definition of the same server key")
			p.f.MCPServers[j] = s
			continue
		}
		seen[key] = len(p.f.MCPServers)
		p.f.MCPServers = append(p.f.MCPServers, s)
	}
}

// markIgnored sets Ignored on the file rules of an overridden server definition.
func (p *parser) markIgnored(s MCPServer, reason string) {
	offsets := map[int]bool{}
	for _, r := range s.IncludeTools {
		offsets[r.Offset] = true
	}
	for _, r := range s.ExcludeTools {
		offsets[r.Offset] = true
	}
	for i := range p.f.Rules {
		if offsets[p.f.Rules[i].Offset] {
			p.f.Rules[i].Ignored = reason
		}
	}
}

// secretList reads an array of strings whose values are secret. Non-strings are skipped
// with a warning that names only the position.
func (p *parser) secretList(v *hujson.Value, keyPath string) []Secret {
	if v == nil {
		return nil
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		p.warn(v.StartOffset, "%s: not an array; ignored", keyPath)
		return nil
	}
	out := make([]Secret, 0, len(arr.Elements))
	for i := range arr.Elements {
		s, ok := str(&arr.Elements[i])
		if !ok {
			p.warn(arr.Elements[i].StartOffset, "%s[%d]: not a string; ignored", keyPath, i)
			continue
		}
		out = append(out, NewSecret(Expand(s, p.env)))
	}
	return out
}

// secretMap reads an object of strings whose values are secret (names are kept in clear).
func (p *parser) secretMap(v *hujson.Value, keyPath string) map[string]Secret {
	o := p.object(v, keyPath)
	if o == nil {
		return nil
	}
	out := make(map[string]Secret, len(o.Members))
	for i := range o.Members {
		m := &o.Members[i]
		name, _ := str(&m.Name)
		s, ok := str(&m.Value)
		if !ok {
			p.warn(m.Value.StartOffset, "%s.%s: not a string; ignored", keyPath, name)
			continue
		}
		out[name] = NewSecret(Expand(s, p.env))
	}
	return out
}
