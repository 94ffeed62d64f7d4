package mcpconfig

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/sessionfix/sessionfix/internal/secret"
	"github.com/tailscale/hujson"
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Options say how a config file is read.
type Options struct {
	// Agent names the program whose reading of the file the messages describe, as in
	// "<Agent>'s JSON.parse rejects it" and "<Agent> uses the last one" (say "Acme CLI").
	Agent string
	// Expand is applied to every string value read through the Doc (never to keys): the
	// agent's $VAR expansion (Expand over an Env). nil keeps values as written.
	Expand func(string) string
	// Origin is given to every server read (Server.Origin): what ReadFile said of the file the
	// data was read from. Read sets it.
	Origin Origin
}

// Doc is one parsed JSON-with-comments config file: its top-level object and the warnings its
// reading found so far. Its methods read members with the rules every agent config here
// shares: the last of a repeated key wins (JSON.parse) with a warning, a value of the wrong
// type is skipped with a warning naming only its position and key, never its text.
type Doc struct {
	Path string
	Data []byte
	// Root is the top-level object.
	Root *hujson.Object
	// Warnings in the order the reading found them.
	Warnings []Warning
	opts     Options
	nl       []int // offsets of '\n'
}

// ParseDoc parses the bytes of the config file named path.
//
// Accepted: JSON with // and /* */ comments, LF or CRLF line ends. Rejected with a
// *ParseError, as strip-json-comments + JSON.parse (the agents' loaders) reject them — the
// agent then ignores the whole file: a UTF-8 BOM (ErrByteOrderMark), a trailing comma
// (ErrTrailingComma), any other syntax error (ErrSyntax; a string not closed on its line is
// placed at its opening quote, the file's text is never quoted), a top-level value that is not
// an object (ErrNotObject). Line and Column are 1-based, Column counts bytes.
func ParseDoc(path string, data []byte, o Options) (*Doc, error) {
	d := &Doc{Path: path, Data: data, opts: o, nl: newlineIndex(data)}
	if bytes.HasPrefix(data, utf8BOM) {
		return nil, d.ErrorAt(0, ErrByteOrderMark,
			fmt.Sprintf("file starts with a UTF-8 byte order mark; %s's JSON.parse rejects it and ignores the whole file", o.Agent))
	}
	root, err := hujson.Parse(data)
	if err != nil {
		if off, ok := unterminatedString(data); ok {
			return nil, d.ErrorAt(off, fmt.Errorf("%w: %w", ErrSyntax, err),
				"string is not closed on its line")
		}
		return nil, d.syntaxError(err)
	}
	if off, ok := firstTrailingComma(&root); ok {
		return nil, d.ErrorAt(off, ErrTrailingComma,
			fmt.Sprintf("trailing comma; %s does not accept trailing commas and ignores the whole file", o.Agent))
	}
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil, d.ErrorAt(root.StartOffset, ErrNotObject, "settings file is not a JSON object")
	}
	d.Root = obj
	return d, nil
}

// Read reads the config file at path (ReadFile: the servers get its Origin) and returns the
// servers of its top-level "mcpServers" object (ReadServers), with the warnings of their
// reading. A missing file yields an error wrapping fs.ErrNotExist, an unusable one a
// *ParseError (ParseDoc).
func Read(path string, o Options) ([]Server, []Warning, error) {
	data, origin, err := ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	o.Origin = origin
	return Parse(path, data, o)
}

// Parse is Read of data, the bytes of the file named path.
func Parse(path string, data []byte, o Options) ([]Server, []Warning, error) {
	d, err := ParseDoc(path, data, o)
	if err != nil {
		return nil, nil, err
	}
	servers := d.ReadServers(d.Object(d.Member(d.Root, "mcpServers", "mcpServers"), "mcpServers"), nil)
	return servers, d.Warnings, nil
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

// Pos converts a byte offset of the file into a 1-based line and byte column.
func (d *Doc) Pos(off int) (line, col int) {
	i := sort.SearchInts(d.nl, off) // newlines before off
	if i == 0 {
		return 1, off + 1
	}
	return i + 1, off - d.nl[i-1]
}

// PosOf is the position of v's bytes in the file.
func (d *Doc) PosOf(v *hujson.Value) Pos {
	line, col := d.Pos(v.StartOffset)
	return Pos{Offset: v.StartOffset, End: v.EndOffset, Line: line, Column: col}
}

// ErrorAt is the *ParseError at byte offset off.
func (d *Doc) ErrorAt(off int, cause error, reason string) *ParseError {
	line, col := d.Pos(off)
	return &ParseError{Path: d.Path, Line: line, Column: col, Reason: reason, Err: cause}
}

// (?s): the message may span lines (an invalid literal quoted whole, a string with a raw line
// break in an inventory); without it such a message lost its position and was shown as it was.
var hujsonErrPattern = regexp.MustCompile(`(?s)^hujson: line (\d+), column (\d+): (.*)$`)

// syntaxError turns a hujson error ("hujson: line L, column C: msg") into a ParseError. The
// parser's message quotes a bad literal whole ("invalid literal: \"sk-…\q\""), and a config
// string may be a secret (an env value, a header): the reason says what is wrong and the
// position says where, the text is never repeated, and the parser's error is not kept as the
// cause (issue 9 item 9).
func (d *Doc) syntaxError(err error) *ParseError {
	m := hujsonErrPattern.FindStringSubmatch(err.Error())
	if m == nil {
		reason := safeSyntaxReason(strings.TrimPrefix(err.Error(), "hujson: "))
		return &ParseError{Path: d.Path, Line: 1, Column: 1, Reason: reason, Err: fmt.Errorf("%w: %s", ErrSyntax, reason)}
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	reason := safeSyntaxReason(m[3])
	return &ParseError{Path: d.Path, Line: line, Column: col, Reason: reason, Err: fmt.Errorf("%w: %s", ErrSyntax, reason)}
}

// SyntaxError is the *ParseError for a hujson parse error of the file at path, worded as
// ParseDoc's own: the file's text is never quoted. For other hand-written JSON inputs of ours
// (an inventory).
func SyntaxError(path string, err error) *ParseError {
	return (&Doc{Path: path}).syntaxError(err)
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

// Warn records a Warning at byte offset off.
func (d *Doc) Warn(off int, format string, args ...any) {
	line, col := d.Pos(off)
	d.Warnings = append(d.Warnings, Warning{Path: d.Path, Line: line, Column: col, Message: fmt.Sprintf(format, args...)})
}

// Expand is the agent's expansion of a string value (Options.Expand).
func (d *Doc) Expand(s string) string {
	if d.opts.Expand == nil {
		return s
	}
	return d.opts.Expand(s)
}

// Member returns the value of the last member named name (JSON.parse keeps the last), and
// warns when the key is repeated. keyPath is only used in the warning.
func (d *Doc) Member(obj *hujson.Object, name, keyPath string) *hujson.Value {
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
		d.Warn(found.StartOffset, "%s: key appears %d times; %s uses the last one", keyPath, n, d.opts.Agent)
	}
	return found
}

// Object returns v as an object, warning when v is present with another type; nil when v is
// nil or not an object.
func (d *Doc) Object(v *hujson.Value, keyPath string) *hujson.Object {
	if v == nil {
		return nil
	}
	o, ok := v.Value.(*hujson.Object)
	if !ok {
		d.Warn(v.StartOffset, "%s: not an object; ignored", keyPath)
		return nil
	}
	return o
}

// Str returns the decoded string of v and whether v is a JSON string.
func Str(v *hujson.Value) (string, bool) {
	lit, ok := v.Value.(hujson.Literal)
	if !ok || lit.Kind() != '"' {
		return "", false
	}
	return lit.String(), true
}

// String reads an optional string member, expanded. Returns "" when absent or not a string
// (with a warning).
func (d *Doc) String(obj *hujson.Object, name, keyPath string) string {
	v := d.Member(obj, name, keyPath)
	if v == nil {
		return ""
	}
	s, ok := Str(v)
	if !ok {
		d.Warn(v.StartOffset, "%s: not a string; ignored", keyPath)
		return ""
	}
	return d.Expand(s)
}

// Bool reads an optional boolean member; nil when absent or not a boolean (with a warning).
func (d *Doc) Bool(obj *hujson.Object, name, keyPath string) *bool {
	v := d.Member(obj, name, keyPath)
	if v == nil {
		return nil
	}
	lit, ok := v.Value.(hujson.Literal)
	if !ok || (lit.Kind() != 't' && lit.Kind() != 'f') {
		d.Warn(v.StartOffset, "%s: not a boolean; ignored", keyPath)
		return nil
	}
	b := lit.Bool()
	return &b
}

// ServerKeyPath is the key path of an mcpServers entry as reports print it: "mcpServers.lit",
// and "mcpServers.\"foo.bar\"" for a key holding a dot, a quote, a space or brackets (or an
// empty key), so mcpServers."foo.bar".excludeTools cannot be read as the key "foo" with a
// member "bar". Quoting follows JSON string syntax (strconv.Quote).
func ServerKeyPath(key string) string {
	if key == "" || strings.ContainsAny(key, ". \t\"'[]\\") || strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 }) {
		return "mcpServers." + strconv.Quote(key)
	}
	return "mcpServers." + key
}

// ReadServers reads every member of the "mcpServers" object servers (nil: none) in file
// order: command, cwd, type, httpUrl / url, trust, timeout, args, env, headers, then the
// Transport they give (httpUrl → HTTP; url → SSE with "type": "sse", else HTTP; else command →
// stdio). A member that is not an object is skipped with a warning. A key given twice keeps
// the last definition at the place of the first (JSON.parse) with a warning. each, when not
// nil, is called after a server's own members are read with the index it takes in the result
// (below the result's length so far: it replaces an earlier definition) and its object, so a
// caller reads its agent's own members (tool filters) in the same pass.
func (d *Doc) ReadServers(servers *hujson.Object, each func(i int, s *Server, o *hujson.Object)) []Server {
	if servers == nil {
		return nil
	}
	var out []Server
	seen := map[string]int{} // key -> index in out (last definition wins)
	for i := range servers.Members {
		m := &servers.Members[i]
		key, _ := Str(&m.Name)
		keyPath := ServerKeyPath(key)
		o, ok := m.Value.Value.(*hujson.Object)
		if !ok {
			d.Warn(m.Value.StartOffset, "%s: not an object; ignored", keyPath)
			continue
		}
		s := d.server(key, keyPath, &m.Name, o)
		j, dup := seen[key]
		if !dup {
			j = len(out)
		}
		if each != nil {
			each(j, &s, o)
		}
		if dup {
			d.Warn(m.Name.StartOffset, "%s: server key appears more than once; %s uses the last one", keyPath, d.opts.Agent)
			out[j] = s
			continue
		}
		seen[key] = j
		out = append(out, s)
	}
	return out
}

// server reads the launch members of the server object o named by name.
func (d *Doc) server(key, keyPath string, name *hujson.Value, o *hujson.Object) Server {
	s := Server{Key: key, Pos: d.PosOf(name), Origin: d.opts.Origin}
	if s.Origin.Path == "" {
		s.Origin.Path = d.Path // not read with ReadFile: named, and not Checked
	}
	s.Command = d.String(o, "command", keyPath+".command")
	s.Cwd = d.String(o, "cwd", keyPath+".cwd")
	s.Type = d.String(o, "type", keyPath+".type")
	if u := d.String(o, "httpUrl", keyPath+".httpUrl"); u != "" {
		s.URL, s.URLKey = u, "httpUrl"
	} else if u := d.String(o, "url", keyPath+".url"); u != "" {
		s.URL, s.URLKey = u, "url"
	}
	s.Transport = transportOf(s.URLKey, s.Type, s.Command)
	if t := d.Bool(o, "trust", keyPath+".trust"); t != nil {
		s.Trust = *t
	}
	if v := d.Member(o, "timeout", keyPath+".timeout"); v != nil {
		if lit, ok := v.Value.(hujson.Literal); ok && lit.Kind() == '0' {
			s.TimeoutMS = int64(lit.Float())
		} else {
			d.Warn(v.StartOffset, "%s.timeout: not a number; ignored", keyPath)
		}
	}
	s.Args = d.secretList(d.Member(o, "args", keyPath+".args"), keyPath+".args")
	s.Env = d.secretMap(d.Member(o, "env", keyPath+".env"), keyPath+".env")
	s.Headers = d.secretMap(d.Member(o, "headers", keyPath+".headers"), keyPath+".headers")
	return s
}

// secretList reads an array of strings whose values are secret. Non-strings are skipped
// with a warning that names only the position.
func (d *Doc) secretList(v *hujson.Value, keyPath string) []secret.Secret {
	if v == nil {
		return nil
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		d.Warn(v.StartOffset, "%s: not an array; ignored", keyPath)
		return nil
	}
	out := make([]secret.Secret, 0, len(arr.Elements))
	for i := range arr.Elements {
		s, ok := Str(&arr.Elements[i])
		if !ok {
			d.Warn(arr.Elements[i].StartOffset, "%s[%d]: not a string; ignored", keyPath, i)
			continue
		}
		out = append(out, secret.NewSecret(d.Expand(s)))
	}
	return out
}

// secretMap reads an object of strings whose values are secret (names are kept in clear).
func (d *Doc) secretMap(v *hujson.Value, keyPath string) map[string]secret.Secret {
	o := d.Object(v, keyPath)
	if o == nil {
		return nil
	}
	out := make(map[string]secret.Secret, len(o.Members))
	for i := range o.Members {
		m := &o.Members[i]
		name, _ := Str(&m.Name)
		s, ok := Str(&m.Value)
		if !ok {
			d.Warn(m.Value.StartOffset, "%s.%s: not a string; ignored", keyPath, name)
			continue
		}
		out[name] = secret.NewSecret(d.Expand(s))
	}
	return out
}
