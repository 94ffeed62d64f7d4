package mcpname

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"

	"golang.org/x/net/idna"
)

// GitHub Copilot CLI naming (issue 26; fixtures/README.md, copilot-real; the releases' own code:
// 1.0.39 and 1.0.40 ship their JavaScript in @github/copilot, 1.0.102 in a native runtime whose
// names were recorded). A Copilot CLI tool name is "<server part>-<tool part>", with a hyphen
// and no "mcp__" prefix. The model sees it; the session stores it (events.jsonl
// data.toolRequests[].name) with the raw server key and tool name beside it.
//
// Eras, in release order:
//
//	CopilotEraRaw              0.0.340–0.0.417  server + "-" + tool, both raw, no length cap
//	CopilotEraServerSanitized  0.0.420–1.0.39   CopilotSanitize(server) + "-" + tool, cut to 64
//	CopilotEraSanitized        1.0.40 on        CopilotSanitize(server) + "-" + CopilotSanitize(tool), cut to 64
//
// The cut (1.0.39's Hne, 1.0.40's lie): a name over 64 UTF-16 units keeps its first 64; when a
// tool of the same server registered earlier already has that name, the last characters are
// replaced by a counter ("…2", "…3", …) until it is free. No hash. Names that come out equal
// without a cut are not told apart: the first tool in Copilot's order answers to the name and
// the others are never offered (CopilotRegister).

// CopilotEra is one of Copilot CLI's naming eras, in release order.
type CopilotEra int

const (
	// CopilotEraRaw (0.0.340 to 0.0.417; from the packages' code, not recorded):
	// "<server>-<tool>", both raw, no cap — the only names that can exceed 64 units.
	CopilotEraRaw CopilotEra = iota
	// CopilotEraServerSanitized (0.0.420 to 1.0.39; recorded: 1.0.39): the server part is
	// CopilotSanitize(server), the tool raw, the whole cut to 64 ("lit-literature.search_pubmed",
	// "lit-搜索文献", "foo-bar-deploy.prod").
	CopilotEraServerSanitized
	// CopilotEraSanitized (1.0.40 on; recorded: 1.0.40, 1.0.102): both parts sanitized, cut to
	// 64 ("lit-literature-search_pubmed", "lit-xn--u2un5au31afvj", "foo-bar-deploy-prod").
	CopilotEraSanitized
)

// CopilotEras lists the eras in release order.
var CopilotEras = []CopilotEra{CopilotEraRaw, CopilotEraServerSanitized, CopilotEraSanitized}

// CopilotLatestVersion is the newest Copilot CLI release whose names and rules were recorded:
// the default "current release" of repair and of the rule model.
const CopilotLatestVersion = "1.0.102"

// CopilotRecordedVersions are the releases fixtures/copilot-real was recorded with.
var CopilotRecordedVersions = []string{"1.0.39", "1.0.40", "1.0.102"}

// CopilotMaxName is the length (UTF-16 units) names are cut to from CopilotEraServerSanitized on.
const CopilotMaxName = 64

var copilotEraStarts = []struct {
	era CopilotEra
	v   [3]int
}{
	{CopilotEraServerSanitized, [3]int{0, 0, 420}},
	{CopilotEraSanitized, [3]int{1, 0, 40}},
}

// String names the era as reports print it ("raw", "server-sanitized", "sanitized").
func (e CopilotEra) String() string {
	switch e {
	case CopilotEraRaw:
		return "raw"
	case CopilotEraServerSanitized:
		return "server-sanitized"
	case CopilotEraSanitized:
		return "sanitized"
	}
	return fmt.Sprintf("CopilotEra(%d)", int(e))
}

// ErrCopilotVersion is returned (wrapped) by ParseCopilotVersion and CopilotEraOf for a version
// that is not "MAJOR.MINOR.PATCH".
var ErrCopilotVersion = errors.New("not a Copilot CLI version (want MAJOR.MINOR.PATCH, such as 1.0.102)")

// ParseCopilotVersion parses a release as Copilot CLI spells it (session.start's
// "copilotVersion", `copilot --version`): "MAJOR.MINOR.PATCH" with decimal parts, optionally
// followed by a pre-release or build suffix ("-beta.1", "+abc") that is ignored.
func ParseCopilotVersion(v string) ([3]int, error) {
	out, err := ParseClaudeVersion(v)
	if err != nil {
		return out, fmt.Errorf("%q: %w", v, ErrCopilotVersion)
	}
	return out, nil
}

// CopilotEraOf returns the naming era of a release ("1.0.39" → CopilotEraServerSanitized). A
// release before 0.0.340 is put in CopilotEraRaw (nothing older was read). An unparsable
// version gives an error wrapping ErrCopilotVersion (and CopilotEraSanitized).
func CopilotEraOf(version string) (CopilotEra, error) {
	v, err := ParseCopilotVersion(version)
	if err != nil {
		return CopilotEraSanitized, err
	}
	era := CopilotEraRaw
	for _, s := range copilotEraStarts {
		if CompareClaudeVersions(v, s.v) >= 0 {
			era = s.era
		}
	}
	return era, nil
}

// copilotLabelSeparator reports the dot separators punycode.js's toASCII splits labels on
// (regexSeparators: U+002E, U+3002, U+FF0E, U+FF61).
func copilotLabelSeparator(r rune) bool {
	return r == '.' || r == '\u3002' || r == '\uff0e' || r == '\uff61'
}

// CopilotSanitize is Copilot CLI's sanitizer of a name part (1.0.39 QP, 1.0.40 xW;
// the recorded 1.0.102 names agree): "@" becomes "-"; then punycode.js's toASCII — the text
// is split into labels at ".", "。", "．" and "｡" (joined again with "."), and a label holding
// a non-ASCII character becomes "xn--" + its punycode (RFC 3492, golang.org/x/net/idna's
// encoder: basic characters kept in their case, no mapping or validation) —; then every
// character outside [A-Za-z0-9_-] becomes "-". So "literature.search_pubmed" →
// "literature-search_pubmed", "get+data" → "get-data", "搜索文献" → "xn--u2un5au31afvj",
// "foo.bar" → "foo-bar", "a@b" → "a-b". The result is ASCII.
func CopilotSanitize(s string) string {
	s = strings.ReplaceAll(s, "@", "-")
	var b strings.Builder
	start := 0
	for i, r := range s {
		if copilotLabelSeparator(r) {
			b.WriteString(copilotLabel(s[start:i]))
			b.WriteByte('.')
			start = i + len(string(r))
		}
	}
	b.WriteString(copilotLabel(s[start:]))
	out := []byte(b.String())
	for i, c := range out {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			out[i] = '-'
		}
	}
	return string(out)
}

// copilotLabel is punycode.js's per-label step of toASCII: a label with a character above
// U+007F becomes "xn--" + its punycode, any other label stays.
func copilotLabel(label string) string {
	for i := 0; i < len(label); i++ {
		if label[i] >= 0x80 {
			a, err := idna.Punycode.ToASCII(label)
			if err != nil || !strings.HasPrefix(a, "xn--") {
				// The encoder refuses nothing a Go string can hold; keep the label's bytes
				// rather than invent an encoding (the final pass turns them into "-").
				return label
			}
			return a
		}
	}
	return label
}

// CopilotFullNameIn is the name era e gives the raw tool (server key, tool) before the 64 cut.
func CopilotFullNameIn(e CopilotEra, server, tool string) string {
	switch e {
	case CopilotEraRaw:
		return server + "-" + tool
	case CopilotEraServerSanitized:
		return CopilotSanitize(server) + "-" + tool
	}
	return CopilotSanitize(server) + "-" + CopilotSanitize(tool)
}

// CopilotNameIn is the name era e gives the raw tool (server key, tool) when no earlier tool of
// the server took its cut form: CopilotFullNameIn cut to its first CopilotMaxName UTF-16 units
// (from CopilotEraServerSanitized on; a surrogate pair cut in two leaves U+FFFD). Vectors
// (fixtures/copilot-real): ("lit", "literature.search_pubmed") → 1.0.39
// "lit-literature.search_pubmed", 1.0.102 "lit-literature-search_pubmed"; ("lit",
// "get_data_for_a_specific_location_and_date_range_extended_with_more_filters") → both
// "lit-get_data_for_a_specific_location_and_date_range_extended_wit" (64).
func CopilotNameIn(e CopilotEra, server, tool string) string {
	n := CopilotFullNameIn(e, server, tool)
	if e == CopilotEraRaw {
		return n
	}
	return copilotCut(n, CopilotMaxName)
}

// copilotCut is JavaScript's s.slice(0, n) over UTF-16 units.
func copilotCut(s string, n int) string {
	if len(s) <= n {
		return s // ASCII or short: no unit count needed (bytes ≥ units)
	}
	u := Units(s)
	if len(u) <= n {
		return s
	}
	return string(utf16.Decode(u[:n]))
}

// CopilotTool is one raw MCP tool as Copilot CLI's configuration knows it: the server key of
// mcpServers (mcp-config.json, .mcp.json, --additional-mcp-config) and the tool name the server
// lists.
type CopilotTool struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// CopilotOffer is one registered MCP tool: its name in the era, whether the name was cut, and
// whether an earlier tool of the list already answers to that name (Shadowed: this tool is
// never offered, calls under the name reach ShadowedBy).
type CopilotOffer struct {
	Tool       CopilotTool  `json:"tool"`
	Name       string       `json:"name"`
	Truncated  bool         `json:"truncated,omitempty"`
	Shadowed   bool         `json:"shadowed,omitempty"`
	ShadowedBy *CopilotTool `json:"shadowed_by,omitempty"`
}

// copilotLess is JavaScript's a < b on strings: UTF-16 code unit order.
func copilotLess(a, b string) bool {
	ua, ub := Units(a), Units(b)
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

// CopilotRegister names tools as a release of era e registers them, in Copilot's order: servers
// by key in UTF-16 code unit order (1.0.39/1.0.40 getTools sorts the connected clients so; the
// default GitHub server first is not modelled), each server's tools named in the order the
// server lists them (a cut name taken by an earlier tool of the same server gets the counter),
// then the server's tools ordered by name (a stable sort). A name an earlier tool of that order
// already has is Shadowed: dispatch finds the first tool by name (1.0.40's find(n =>
// n.name === t)), so only the first is offered and called. That the native 1.0.102 runtime keeps
// this order is assumed (its recorded list follows it; no shadowing was recorded).
func CopilotRegister(e CopilotEra, tools []CopilotTool) []CopilotOffer {
	var servers []string
	byServer := map[string][]CopilotTool{}
	for _, t := range tools {
		if _, ok := byServer[t.Server]; !ok {
			servers = append(servers, t.Server)
		}
		byServer[t.Server] = append(byServer[t.Server], t)
	}
	// insertion sort by UTF-16 order (few servers)
	for i := 1; i < len(servers); i++ {
		for j := i; j > 0 && copilotLess(servers[j], servers[j-1]); j-- {
			servers[j], servers[j-1] = servers[j-1], servers[j]
		}
	}
	var out []CopilotOffer
	first := map[string]CopilotTool{}
	for _, s := range servers {
		taken := map[string]bool{}
		var offers []CopilotOffer
		for _, t := range byServer[s] {
			full := CopilotFullNameIn(e, t.Server, t.Tool)
			o := CopilotOffer{Tool: t, Name: full}
			if e != CopilotEraRaw && Len(full) > CopilotMaxName {
				o.Truncated = true
				n := copilotCut(full, CopilotMaxName)
				for c := 2; taken[n]; c++ {
					suffix := fmt.Sprint(c)
					n = copilotCut(full, CopilotMaxName-len(suffix)) + suffix
				}
				o.Name = n
			}
			taken[o.Name] = true
			offers = append(offers, o)
		}
		for i := 1; i < len(offers); i++ {
			for j := i; j > 0 && copilotLess(offers[j].Name, offers[j-1].Name); j-- {
				offers[j], offers[j-1] = offers[j-1], offers[j]
			}
		}
		for _, o := range offers {
			if w, ok := first[o.Name]; ok {
				w := w
				o.Shadowed, o.ShadowedBy = true, &w
			} else {
				first[o.Name] = o.Tool
			}
			out = append(out, o)
		}
	}
	return out
}

// CopilotToolPart is the tool part of a registered name as Copilot's permission check sees it
// (1.0.39 Nit, 1.0.40 ait: name.substring(S(server).length + 1)): the characters after the
// server part and its hyphen — the sanitized, possibly cut tool name from CopilotEraSanitized
// on, the raw (possibly cut) tool before. In CopilotEraRaw the server part is the raw key.
// ok is false when name does not start with that server part and a hyphen.
func CopilotToolPart(e CopilotEra, server, name string) (string, bool) {
	prefix := server + "-"
	if e != CopilotEraRaw {
		prefix = CopilotSanitize(server) + "-"
	}
	rest, ok := strings.CutPrefix(name, prefix)
	return rest, ok
}

// CopilotDispatchName is the name a release of era e looks a model's tool call up by: from
// CopilotEraServerSanitized on every run of characters outside [a-zA-Z0-9_-] in the returned
// name becomes one "_" (1.0.39's and 1.0.40's plr/… over tool_calls; 1.0.39 stored and
// dispatched "lit-literature_search_pubmed" for a call to "lit-literature.search_pubmed", which
// then ran the other tool literature_search_pubmed); CopilotEraRaw dispatches the name as
// returned.
func CopilotDispatchName(e CopilotEra, called string) string {
	if e == CopilotEraRaw {
		return called
	}
	var b strings.Builder
	in := false
	for _, r := range called {
		if r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			b.WriteRune(r)
			in = false
			continue
		}
		if !in {
			b.WriteByte('_')
		}
		in = true
	}
	return b.String()
}

// CopilotNameAccepted reports whether a provider with the OpenAI function-name rule
// ^[a-zA-Z0-9_-]{1,64}$ (the rule of the endpoint Copilot CLI sends to; the STRICT stand-in of
// fixtures/copilot-real) accepts name.
func CopilotNameAccepted(name string) bool {
	if name == "" || len(name) > CopilotMaxName {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
