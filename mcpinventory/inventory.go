package mcpinventory

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"

	"github.com/tailscale/hujson"

	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpname"
)

// Source says where a server or tool entry comes from.
type Source string

// Sources.
const (
	SourceFile       Source = "file"
	SourceDiscovered Source = "discovered"
	SourceInferred   Source = "inferred"
)

// Tool is one raw tool name of a server.
type Tool struct {
	// Name is the raw tool name, exactly as the server lists it (dots, CJK, … kept).
	Name   string `json:"name"`
	Source Source `json:"source"`
}

// Server is one MCP server of the inventory.
type Server struct {
	// Key is the configured server key (the <server> of mcp__<server>__<tool>).
	Key string `json:"key"`
	// Trust is the server's "trust" flag (default permission allow in trusted folders).
	Trust  bool   `json:"trust"`
	Source Source `json:"source"`
	// Tools are unique by Name and sorted by Name.
	Tools []Tool `json:"tools"`
}

// Inventory maps server keys to servers. The zero value is not usable; call New.
// Not safe for concurrent writes.
type Inventory struct {
	Servers map[string]*Server `json:"servers"`
}

// New returns an empty inventory.
func New() *Inventory { return &Inventory{Servers: map[string]*Server{}} }

// Add records a server (created with trust and source when it is new; an existing server
// keeps its trust and source) and its tools (each new tool gets source; a tool already
// present keeps its own). It returns the server.
func (inv *Inventory) Add(key string, trust bool, source Source, tools ...string) *Server {
	s := inv.Servers[key]
	if s == nil {
		s = &Server{Key: key, Trust: trust, Source: source}
		inv.Servers[key] = s
	}
	for _, t := range tools {
		i := sort.Search(len(s.Tools), func(i int) bool { return s.Tools[i].Name >= t })
		if i < len(s.Tools) && s.Tools[i].Name == t {
			continue
		}
		s.Tools = append(s.Tools, Tool{})
		copy(s.Tools[i+1:], s.Tools[i:])
		s.Tools[i] = Tool{Name: t, Source: source}
	}
	return s
}

// Merge adds every server and tool of other that inv lacks (existing entries win, so merge
// the most authoritative inventory first: file, then discovered, then inferred).
func (inv *Inventory) Merge(other *Inventory) {
	for _, k := range other.Keys() {
		o := other.Servers[k]
		s := inv.Add(k, o.Trust, o.Source)
		for _, t := range o.Tools {
			inv.Add(k, s.Trust, t.Source, t.Name)
		}
	}
}

// Keys returns the server keys, sorted.
func (inv *Inventory) Keys() []string {
	keys := make([]string, 0, len(inv.Servers))
	for k := range inv.Servers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ServerTool is one tool of an inventory: its server key and raw tool name.
type ServerTool struct{ Server, Tool string }

// InOrder lists inv's tools: the servers of order first, in that order (a key inv lacks is
// skipped), then the other servers sorted; each server's tools in the inventory's (sorted) order. The
// rule audits list tools so, configured servers in their config order.
func (inv *Inventory) InOrder(order []string) []ServerTool {
	keys := slices.Clone(order)
	for _, k := range inv.Keys() {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	var out []ServerTool
	for _, k := range keys {
		if s := inv.Servers[k]; s != nil {
			for _, t := range s.Tools {
				out = append(out, ServerTool{Server: k, Tool: t.Name})
			}
		}
	}
	return out
}

// Raws returns every raw identity mcp__<server>__<tool> (mcpname.Raw), sorted.
func (inv *Inventory) Raws() []string {
	var out []string
	for _, s := range inv.Servers {
		for _, t := range s.Tools {
			out = append(out, mcpname.Raw(s.Key, t.Name))
		}
	}
	sort.Strings(out)
	return out
}

// Index returns an mcpname.Index over Raws (registered and legacy spellings of every tool).
func (inv *Inventory) Index() *mcpname.Index { return mcpname.NewIndex(inv.Raws()...) }

// ErrFormat is the cause of a *mcpconfig.ParseError for an inventory file that is valid JSON
// but not of the inventory shape.
var ErrFormat = errors.New("bad inventory format")

// Load reads an inventory file. See Parse.
func Load(path string) (*Inventory, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read inventory %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse parses an inventory file (audit.md "Inputs"):
//
//	{"servers": {"foo.bar": {"trust": false, "tools": ["get_data", "deploy.prod"]},
//	             "lit": {"tools": ["literature.search_pubmed"]}}}
//
// "trust" defaults to false, "tools" to none; other keys are ignored. Comments and trailing
// commas are accepted (this is our own format). A problem is a *mcpconfig.ParseError with the
// file, line and column: mcpconfig.ErrSyntax for bad JSON, ErrFormat for a missing "servers"
// object, a repeated server key, a value of the wrong type or an empty tool name. Every
// server and tool gets SourceFile.
func Parse(path string, data []byte) (*Inventory, error) {
	p := &parser{path: path, data: data}
	root, err := hujson.Parse(data)
	if err != nil {
		return nil, p.syntaxError(err)
	}
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil, p.fail(root.StartOffset, "inventory is not a JSON object")
	}
	var servers *hujson.Value
	for i := range obj.Members {
		if name, _ := str(&obj.Members[i].Name); name == "servers" {
			servers = &obj.Members[i].Value
		}
	}
	if servers == nil {
		return nil, p.fail(root.StartOffset, `inventory has no "servers" object`)
	}
	so, ok := servers.Value.(*hujson.Object)
	if !ok {
		return nil, p.fail(servers.StartOffset, `"servers" is not an object`)
	}
	inv := New()
	for i := range so.Members {
		m := &so.Members[i]
		key, _ := str(&m.Name)
		if _, dup := inv.Servers[key]; dup {
			return nil, p.fail(m.Name.StartOffset, fmt.Sprintf("server %q is listed twice", key))
		}
		srv, ok := m.Value.Value.(*hujson.Object)
		if !ok {
			return nil, p.fail(m.Value.StartOffset, fmt.Sprintf("server %q: not an object", key))
		}
		trust := false
		var tools []string
		for j := range srv.Members {
			f := &srv.Members[j]
			switch name, _ := str(&f.Name); name {
			case "trust":
				lit, ok := f.Value.Value.(hujson.Literal)
				if !ok || (lit.Kind() != 't' && lit.Kind() != 'f') {
					return nil, p.fail(f.Value.StartOffset, fmt.Sprintf("server %q: \"trust\" is not a boolean", key))
				}
				trust = lit.Bool()
			case "tools":
				arr, ok := f.Value.Value.(*hujson.Array)
				if !ok {
					return nil, p.fail(f.Value.StartOffset, fmt.Sprintf("server %q: \"tools\" is not an array", key))
				}
				for k := range arr.Elements {
					e := &arr.Elements[k]
					t, ok := str(e)
					if !ok {
						return nil, p.fail(e.StartOffset, fmt.Sprintf("server %q: tools[%d] is not a string", key, k))
					}
					if t == "" {
						return nil, p.fail(e.StartOffset, fmt.Sprintf("server %q: tools[%d] is empty", key, k))
					}
					tools = append(tools, t)
				}
			}
		}
		inv.Add(key, trust, SourceFile, tools...)
	}
	return inv, nil
}

type parser struct {
	path string
	data []byte
}

func (p *parser) pos(off int) (int, int) {
	line := 1 + bytes.Count(p.data[:off], []byte("\n"))
	return line, off - bytes.LastIndexByte(p.data[:off], '\n')
}

func (p *parser) fail(off int, reason string) error {
	line, col := p.pos(off)
	return &mcpconfig.ParseError{Path: p.path, Line: line, Column: col, Reason: reason, Err: ErrFormat}
}

// syntaxError words a hujson error as the config reader does (mcpconfig.SyntaxError): the
// file's text is never quoted.
func (p *parser) syntaxError(err error) error {
	return mcpconfig.SyntaxError(p.path, err)
}

func str(v *hujson.Value) (string, bool) {
	lit, ok := v.Value.(hujson.Literal)
	if !ok || lit.Kind() != '"' {
		return "", false
	}
	return lit.String(), true
}
