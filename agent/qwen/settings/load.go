package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sort"

	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/tailscale/hujson"
)

// Load reads and parses one settings file. env drives $VAR expansion (nil: nothing is
// expanded). A missing file yields an error wrapping fs.ErrNotExist; a file that is not
// usable yields a *ParseError (see Parse).
//
// The file is read as any config a user may control (mcpconfig.ReadFile): its MCP servers carry
// who owns it, and --discover starts none from a file another user owns or can write.
func Load(path string, scope Scope, env Env) (*File, error) {
	data, origin, err := mcpconfig.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read settings %s: %w", path, err)
	}
	return parse(path, data, scope, env, origin)
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
// not in effect in Qwen Code; mcpconfig.ParseDoc): a UTF-8 BOM (ErrByteOrderMark), a trailing
// comma (ErrTrailingComma), any other syntax error (ErrSyntax), a top-level value that is not
// an object (ErrNotObject). Values of the wrong type inside the object (a rule list that is not
// an array, a rule that is not a string) are skipped with a Warning.
func Parse(path string, data []byte, scope Scope, env Env) (*File, error) {
	return parse(path, data, scope, env, mcpconfig.Origin{Path: path})
}

// parse is Parse with the Origin of the file's servers (Load).
func parse(path string, data []byte, scope Scope, env Env, origin mcpconfig.Origin) (*File, error) {
	d, err := mcpconfig.ParseDoc(path, data, mcpconfig.Options{Agent: agentName, Origin: origin, Expand: func(s string) string { return Expand(s, env) }})
	if err != nil {
		return nil, err
	}
	p := &parser{d: d, env: env, f: &File{Path: path, Scope: scope}}
	p.readFile(d.Root)
	p.f.Warnings = d.Warnings
	sort.SliceStable(p.f.Rules, func(i, j int) bool { return p.f.Rules[i].Offset < p.f.Rules[j].Offset })
	return p.f, nil
}

// agentName is how messages name the program whose reading they describe.
const agentName = "Qwen Code"

type parser struct {
	d   *mcpconfig.Doc
	env Env
	f   *File
}

// ServerKeyPath is mcpconfig.ServerKeyPath: "mcpServers.lit", "mcpServers.\"foo.bar\"".
func ServerKeyPath(key string) string { return mcpconfig.ServerKeyPath(key) }

func (p *parser) origin(key string, index int, v *hujson.Value) Origin {
	return p.originPos(key, index, p.d.PosOf(v))
}

func (p *parser) originPos(key string, index int, at mcpconfig.Pos) Origin {
	return Origin{File: p.f.Path, Scope: p.f.Scope, Key: key, Index: index,
		Offset: at.Offset, End: at.End, Line: at.Line, Column: at.Column}
}

// ruleList records every string element of the array v as a Rule.
func (p *parser) ruleList(v *hujson.Value, key string, kind Kind, server string, v1 bool, ignored string) []Rule {
	if v == nil {
		return nil
	}
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		p.d.Warn(v.StartOffset, "%s: not an array; ignored", key)
		return nil
	}
	p.f.Lists = append(p.f.Lists, key)
	var out []Rule
	for i := range arr.Elements {
		e := &arr.Elements[i]
		s, ok := mcpconfig.Str(e)
		if !ok {
			p.d.Warn(e.StartOffset, "%s[%d]: not a string; ignored", key, i)
			continue
		}
		r := Rule{Origin: p.origin(key, i, e), Kind: kind, Server: server,
			Literal: s, Expanded: p.d.Expand(s), V1: v1, Ignored: ignored}
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
	if v := p.d.Member(root, "$version", "$version"); v != nil {
		if lit, ok := v.Value.(hujson.Literal); ok && lit.Kind() == '0' {
			if x := lit.Float(); x == math.Trunc(x) && !math.IsInf(x, 0) {
				f.Version, f.HasVersion = int(x), true
			}
		}
		if !f.HasVersion {
			p.d.Warn(v.StartOffset, "$version: not an integer; Qwen Code treats the file as unversioned")
		}
	}
	f.V1 = !f.HasVersion || f.Version < 2

	if perms := p.d.Object(p.d.Member(root, "permissions", "permissions"), "permissions"); perms != nil {
		p.ruleList(p.d.Member(perms, "allow", "permissions.allow"), "permissions.allow", KindAllow, "", false, "")
		p.ruleList(p.d.Member(perms, "ask", "permissions.ask"), "permissions.ask", KindAsk, "", false, "")
		p.ruleList(p.d.Member(perms, "deny", "permissions.deny"), "permissions.deny", KindDeny, "", false, "")
	}
	if tools := p.d.Object(p.d.Member(root, "tools", "tools"), "tools"); tools != nil {
		p.ruleList(p.d.Member(tools, "allowed", "tools.allowed"), "tools.allowed", KindAllow, "", false, "")
		p.ruleList(p.d.Member(tools, "exclude", "tools.exclude"), "tools.exclude", KindDeny, "", false, "")
		p.ruleList(p.d.Member(tools, "disabled", "tools.disabled"), "tools.disabled", KindDisabled, "", false, "")
		p.ruleList(p.d.Member(tools, "core", "tools.core"), "tools.core", KindCore, "", false, "")
		f.ApprovalMode = p.d.String(tools, "approvalMode", "tools.approvalMode")
	}
	if mcp := p.d.Object(p.d.Member(root, "mcp", "mcp"), "mcp"); mcp != nil {
		p.ruleList(p.d.Member(mcp, "allowed", "mcp.allowed"), "mcp.allowed", KindMCPAllowed, "", false, "")
		p.ruleList(p.d.Member(mcp, "excluded", "mcp.excluded"), "mcp.excluded", KindMCPExcluded, "", false, "")
	}
	if sec := p.d.Object(p.d.Member(root, "security", "security"), "security"); sec != nil {
		if ft := p.d.Object(p.d.Member(sec, "folderTrust", "security.folderTrust"), "security.folderTrust"); ft != nil {
			f.FolderTrust = p.d.Bool(ft, "enabled", "security.folderTrust.enabled")
		}
	}

	ignored := ""
	if !f.V1 {
		ignored = fmt.Sprintf("v1 key in a file with \"$version\": %d; Qwen Code ignores it", f.Version)
	}
	for _, k := range v1Keys {
		v := p.d.Member(root, k.key, k.key)
		if v == nil {
			continue
		}
		if ignored != "" {
			p.d.Warn(v.StartOffset, "%s: %s", k.key, ignored)
		}
		p.ruleList(v, k.key, k.kind, "", true, ignored)
	}
	if f.V1 {
		if m := p.d.String(root, "approvalMode", "approvalMode"); m != "" && f.ApprovalMode == "" {
			f.ApprovalMode = m
		}
		if b := p.d.Bool(root, "folderTrust", "folderTrust"); b != nil && f.FolderTrust == nil {
			f.FolderTrust = b
		}
	}

	if servers := p.d.Object(p.d.Member(root, "mcpServers", "mcpServers"), "mcpServers"); servers != nil {
		p.readServers(servers)
	}
}

func (p *parser) readServers(servers *hujson.Object) {
	var filters []MCPServer // the Qwen part of each server, at the server's index
	ss := p.d.ReadServers(servers, func(i int, s *mcpconfig.Server, o *hujson.Object) {
		keyPath := ServerKeyPath(s.Key)
		ms := MCPServer{Origin: p.originPos(keyPath, -1, s.Pos)}
		ms.IncludeTools = p.ruleList(p.d.Member(o, "includeTools", keyPath+".includeTools"),
			keyPath+".includeTools", KindIncludeTools, s.Key, false, "")
		ms.ExcludeTools = p.ruleList(p.d.Member(o, "excludeTools", keyPath+".excludeTools"),
			keyPath+".excludeTools", KindExcludeTools, s.Key, false, "")
		if i < len(filters) {
			// JSON.parse keeps the last definition; its entries are the ones in effect.
			p.markIgnored(filters[i], "shadowed by a later definition of the same server key")
			filters[i] = ms
			return
		}
		filters = append(filters, ms)
	})
	for i := range ss {
		filters[i].Server = ss[i]
	}
	p.f.MCPServers = append(p.f.MCPServers, filters...)
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
