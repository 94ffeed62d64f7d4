package mcpname

import (
	"errors"
	"fmt"
	"strings"
)

// Gemini CLI naming (issue 25; fixtures/gemini-real/README.md "Releases and naming eras", read
// against the npm packages @google/gemini-cli-core 0.10.0, 0.25.2, 0.26.0, 0.32.1, 0.33.0 and
// the bundle of @google/gemini-cli 0.61.0: packages/core/src/tools/mcp-tool.ts generateValidName,
// DiscoveredMCPTool, asFullyQualifiedTool; packages/core/src/tools/tool-registry.ts registerTool).
// Every length, slice and character test counts UTF-16 code units, as the CLI (JavaScript, regular
// expressions without the u flag) does: an astral character becomes two "_".
//
// Up to 0.32.x the model saw an MCP tool under its bare tool name; the second tool registering a
// bare name already taken got "<server>__<tool>" instead (which one was second depended on which
// server finished discovery first: the same stored name may mean different tools in two
// sessions). From 0.33.0 every MCP tool is "mcp_<server>_<tool>", sanitized as a whole; two tools
// that sanitize alike share one name and the tool registered last answers it ("Tool with name …
// is already registered. Overwriting.").

// GeminiEra is one of Gemini CLI's naming eras, in release order (a later era compares greater).
type GeminiEra int

const (
	// GeminiEraBare (up to 0.25.x; recorded: 0.10.0): the bare tool name through
	// GeminiValidNameV1; on a collision "<server>__<raw tool>" (server and tool raw, no cap).
	GeminiEraBare GeminiEra = iota
	// GeminiEraBareSanitized (0.26.0 to 0.32.x; recorded: 0.32.1): the bare tool name as before; on
	// a collision "<server>__" + GeminiValidNameV1(tool) (the server part never sanitized).
	GeminiEraBareSanitized
	// GeminiEraQualified (0.33.0 on; recorded: 0.33.2, 0.61.0): GeminiName(server, tool) for every
	// MCP tool; a name two tools share is declared once.
	GeminiEraQualified
)

// GeminiEras lists the eras in release order.
var GeminiEras = []GeminiEra{GeminiEraBare, GeminiEraBareSanitized, GeminiEraQualified}

// GeminiLatestVersion is the newest Gemini CLI release whose naming and rules were recorded (the
// default "current release" of repair and of the rule outcome model).
const GeminiLatestVersion = "0.61.0"

// GeminiRecordedVersions are the releases the recording ran, oldest first.
var GeminiRecordedVersions = []string{"0.10.0", "0.32.1", "0.33.2", "0.61.0"}

// geminiEraStarts is the first release of each era after GeminiEraBare (read in the npm packages:
// 0.25.2's asFullyQualifiedTool keeps the raw tool, 0.26.0's sanitizes it; 0.33.0 is the first
// release with mcp_ names).
var geminiEraStarts = []struct {
	era GeminiEra
	v   [3]int
}{
	{GeminiEraBareSanitized, [3]int{0, 26, 0}},
	{GeminiEraQualified, [3]int{0, 33, 0}},
}

// String is the era's name as reports print it ("bare", "bare-sanitized", "qualified").
func (e GeminiEra) String() string {
	switch e {
	case GeminiEraBare:
		return "bare"
	case GeminiEraBareSanitized:
		return "bare-sanitized"
	case GeminiEraQualified:
		return "qualified"
	}
	return fmt.Sprintf("GeminiEra(%d)", int(e))
}

// ErrGeminiVersion is returned (wrapped) by ParseGeminiVersion and GeminiEraOf for a version that
// is not "MAJOR.MINOR.PATCH" with decimal parts.
var ErrGeminiVersion = errors.New("not a Gemini CLI version (want MAJOR.MINOR.PATCH, such as 0.61.0)")

// ParseGeminiVersion parses a Gemini CLI release ("0.61.0", "0.34.0-preview.1",
// "0.40.0-nightly.20260101.abc": a suffix after "-", "+" or a space is ignored).
func ParseGeminiVersion(v string) ([3]int, error) {
	p, err := ParseClaudeVersion(v) // the same release grammar
	if err != nil {
		return p, fmt.Errorf("%q: %w", v, ErrGeminiVersion)
	}
	return p, nil
}

// GeminiEraOf returns the naming era of a Gemini CLI release ("0.32.1" → GeminiEraBareSanitized).
// A version ParseGeminiVersion rejects gives an error wrapping ErrGeminiVersion.
func GeminiEraOf(version string) (GeminiEra, error) {
	v, err := ParseGeminiVersion(version)
	if err != nil {
		return GeminiEraQualified, err
	}
	era := GeminiEraBare
	for _, s := range geminiEraStarts {
		if CompareClaudeVersions(v, s.v) >= 0 {
			era = s.era
		}
	}
	return era, nil
}

// geminiV1Char is the character set of generateValidName up to 0.32.x: [a-zA-Z0-9_.-].
func geminiV1Char(c uint16) bool { return isProviderChar(c) || c == '.' }

// geminiChar is the character set of generateValidName from 0.33.0: [a-zA-Z0-9_\-.:].
func geminiChar(c uint16) bool { return isProviderChar(c) || c == '.' || c == ':' }

// GeminiValidNameV1 is generateValidName of Gemini CLI up to 0.32.x, applied to a raw tool name:
// every UTF-16 unit outside [a-zA-Z0-9_.-] becomes "_"; a result over 63 units keeps its first 28
// and last 32 with "___" between (63 units). Vectors (fixtures/gemini-real/README.md): "get+data"
// → "get_data", "搜索文献" → "____", the 72-unit
// "get_data_for_a_specific_location_and_date_range_extended_with_more_words" →
// "get_data_for_a_specific_loca___e_range_extended_with_more_words".
func GeminiValidNameV1(tool string) string {
	s := substitute(Units(tool), geminiV1Char)
	if len(s) > 63 {
		return string(s[:28]) + "___" + string(s[len(s)-32:])
	}
	return string(s)
}

// GeminiValidName is generateValidName of Gemini CLI from 0.33.0 (0.61.0 recorded), applied to
// "<server>_<tool>": "mcp_" is put in front unless the name starts with it already; every UTF-16
// unit outside [a-zA-Z0-9_\-.:] becomes "_"; a name whose first character is not a letter or "_"
// gets a leading "_" (never the case after "mcp_"); a result over 63 units keeps its first 30 and
// last 30 with "..." between (63 units).
func GeminiValidName(name string) string {
	if !strings.HasPrefix(name, "mcp_") {
		name = "mcp_" + name
	}
	s := substitute(Units(name), geminiChar)
	if len(s) > 0 && !(isLetter(s[0]) || s[0] == '_') {
		s = append([]byte{'_'}, s...)
	}
	if len(s) > 63 {
		return string(s[:30]) + "..." + string(s[len(s)-30:])
	}
	return string(s)
}

// GeminiName is the name Gemini CLI from 0.33.0 declares for the MCP tool (server key, raw tool):
// GeminiValidName(server + "_" + tool). Vectors (fixtures/gemini-real/README.md, 0.61.0):
// ("foo.bar", "deploy.prod") → "mcp_foo.bar_deploy.prod", ("foo bar", "get_data") and
// ("foo_bar", "get_data") → "mcp_foo_bar_get_data" (shared), ("lit", "搜索文献") → "mcp_lit_____",
// ("com.example.enterprise-search-platform", "query_documents_by_semantic_similarity_and_rank") →
// "mcp_com.example.enterprise-sea...y_semantic_similarity_and_rank". A server key that starts with
// "mcp_" is not prefixed again: ("mcp_x", "t") → "mcp_x_t".
func GeminiName(server, tool string) string { return GeminiValidName(server + "_" + tool) }

// GeminiServerPrefix is the prefix GeminiName gives a server's tools before truncation
// (generateValidName(server + "_"), DiscoveredMCPTool.getFullyQualifiedPrefix from 0.33.0):
// ("foo bar") → "mcp_foo_bar_".
func GeminiServerPrefix(server string) string { return GeminiValidName(server + "_") }

// GeminiBareName is the name a release of era e < GeminiEraQualified declared for a tool that was
// the first to register its bare name: GeminiValidNameV1(tool). For GeminiEraQualified it is
// GeminiName.
func GeminiBareName(e GeminiEra, server, tool string) string {
	if e >= GeminiEraQualified {
		return GeminiName(server, tool)
	}
	return GeminiValidNameV1(tool)
}

// GeminiCollisionName is the name a release of era e < GeminiEraQualified declared for a tool
// whose bare name another tool had registered first: "<server>__<raw tool>" (GeminiEraBare,
// recorded 0.10.0: "foo.bar__get_data", "foo bar__get_data") or "<server>__" +
// GeminiValidNameV1(tool) (GeminiEraBareSanitized, recorded 0.32.1). The server part is never
// sanitized and the name never capped. For GeminiEraQualified it is GeminiName.
func GeminiCollisionName(e GeminiEra, server, tool string) string {
	switch e {
	case GeminiEraBare:
		return server + "__" + tool
	case GeminiEraBareSanitized:
		return server + "__" + GeminiValidNameV1(tool)
	}
	return GeminiName(server, tool)
}

// GeminiNamesIn lists the names a release of era e may have declared for the raw tool (server,
// tool): its bare name and its collision name before GeminiEraQualified (which one depended on
// start-up order), GeminiName from it on. The stored name of a call written by that era is one of
// them.
func GeminiNamesIn(e GeminiEra, server, tool string) []string {
	if e >= GeminiEraQualified {
		return []string{GeminiName(server, tool)}
	}
	return []string{GeminiBareName(e, server, tool), GeminiCollisionName(e, server, tool)}
}

// GeminiTool is one raw MCP tool as Gemini CLI's configuration knows it: the key of
// settings.json mcpServers and the tool name the server lists.
type GeminiTool struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// GeminiToolsNamed returns the tools that era e may have declared under name (GeminiNamesIn), in
// list order (nil when none); every era when e is nil. Two or more means the stored name alone
// does not tell the raw tool.
func GeminiToolsNamed(e *GeminiEra, name string, tools []GeminiTool) []GeminiTool {
	eras := GeminiEras
	if e != nil {
		eras = []GeminiEra{*e}
	}
	var out []GeminiTool
	for _, t := range tools {
	eraLoop:
		for _, era := range eras {
			for _, n := range GeminiNamesIn(era, t.Server, t.Tool) {
				if n == name {
					out = append(out, t)
					break eraLoop
				}
			}
		}
	}
	return out
}

// geminiDisplaySuffix ends the displayName Gemini CLI stores for an MCP tool call.
const geminiDisplaySuffix = " MCP Server)"

// GeminiDisplayName is the displayName Gemini CLI (every recorded release) gives the MCP tool
// (server key, raw tool): "<tool> (<server> MCP Server)" (DiscoveredMCPTool).
func GeminiDisplayName(server, tool string) string {
	return tool + " (" + server + geminiDisplaySuffix
}

// GeminiDisplayNameSplits lists every (server, tool) a stored displayName
// "<tool> (<server> MCP Server)" can be read as, one per " (" of the text before " MCP Server)",
// in text order: one for a displayName whose server key and tool hold no " (", more otherwise
// ("a (b (c MCP Server)" → server "b (c" and tool "a", or server "c" and tool "a (b"); nil for any
// other displayName (a built-in tool's "ReadFile").
func GeminiDisplayNameSplits(display string) []GeminiTool {
	body, found := strings.CutSuffix(display, geminiDisplaySuffix)
	if !found {
		return nil
	}
	var out []GeminiTool
	for i := 0; i+2 <= len(body); i++ {
		if body[i] == ' ' && body[i+1] == '(' {
			out = append(out, GeminiTool{Server: body[i+2:], Tool: body[:i]})
		}
	}
	return out
}

// ParseGeminiDisplayName reads the raw identity out of a stored displayName
// "<tool> (<server> MCP Server)". When the text splits at more than one " (" (a tool or server key
// holding " ("), a split whose server is one of keys wins (the first such, in the order the text
// is read); with no key matching, the split at the last " (" is taken and ambiguous is true. ok is
// false for any other displayName (a built-in tool's "ReadFile", "Shell").
func ParseGeminiDisplayName(display string, keys []string) (server, tool string, ambiguous, ok bool) {
	body, found := strings.CutSuffix(display, geminiDisplaySuffix)
	if !found {
		return "", "", false, false
	}
	var splits []int
	for i := 0; i+2 <= len(body); i++ {
		if body[i] == ' ' && body[i+1] == '(' {
			splits = append(splits, i)
		}
	}
	if len(splits) == 0 {
		return "", "", false, false
	}
	for _, i := range splits {
		for _, k := range keys {
			if body[i+2:] == k {
				return k, body[:i], false, true
			}
		}
	}
	i := splits[len(splits)-1]
	return body[i+2:], body[:i], len(splits) > 1, true
}
