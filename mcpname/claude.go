package mcpname

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// claudeAIServerPrefix starts the names of claude.ai connector servers in Claude Code
// (CLAUDEAI_SERVER_PREFIX, src/services/mcp/normalization.ts).
const claudeAIServerPrefix = "claude.ai "

// ClaudeNormalize is Claude Code's normalizeNameForMCP (schemes.md §C.1;
// src/services/mcp/normalization.ts, as read in leaked-source mirrors): every UTF-16 code unit
// outside [a-zA-Z0-9_-] becomes "_" (an astral character becomes "__"). When name starts with
// "claude.ai ", runs of "_" then collapse to one and one leading and one trailing "_" are
// dropped. There is no length cap, truncation or hash.
func ClaudeNormalize(name string) string {
	n := ProviderSubstitute(name)
	if !strings.HasPrefix(name, claudeAIServerPrefix) {
		return n
	}
	var out strings.Builder
	for i := 0; i < len(n); i++ {
		if n[i] == '_' && i > 0 && n[i-1] == '_' {
			continue
		}
		out.WriteByte(n[i])
	}
	n = strings.TrimPrefix(out.String(), "_")
	return strings.TrimSuffix(n, "_")
}

// ClaudePrefix is Claude Code's getMcpPrefix (src/services/mcp/mcpStringUtils.ts):
// "mcp__" + ClaudeNormalize(server) + "__". A permission rule equal to the prefix without the
// trailing "__" matches every tool of the server (schemes.md §C.3).
func ClaudePrefix(server string) string { return Prefix + ClaudeNormalize(server) + "__" }

// ClaudeName is the model-visible name Claude Code gives an MCP tool (schemes.md §C.1,
// buildMcpToolName): ClaudePrefix(server) + ClaudeNormalize(tool). Plugin servers
// "plugin:<plugin>:<server>" come out as "mcp__plugin_<plugin>_<server>__<tool>". Names are not
// capped or de-duplicated, so they can exceed the API's 64 and collide, and splitting them on
// "__" is ambiguous ("my..server" → "mcp__my__server__…"). The SDK no-prefix mode
// (CLAUDE_AGENT_SDK_MCP_NO_PREFIX) is not modelled: there the name is the raw tool name.
func ClaudeName(server, tool string) string { return ClaudePrefix(server) + ClaudeNormalize(tool) }

// Claude Code naming eras (issue 11, recorded with the releases 1.0.0, 1.0.51, 2.0.14, 2.1.90
// and 2.1.332 against a loopback Anthropic stand-in; fixtures/claude-real/README.md "Names" holds
// the 1.0.51 and 2.1.332 columns byte for byte). The release boundaries are approximate: each
// is the first release the issue's bisection attributes the change to ("about 1.0.11", "about
// 1.0.84", "about 2.1.50"); releases between two recorded ones are placed by that boundary.
// No era caps the length, truncates or hashes a name: 82- and 92-unit names are stored and sent
// as they are.

// ClaudeEra is one of Claude Code's naming eras, in release order (a later era compares greater).
type ClaudeEra int

const (
	// ClaudeEraRaw (before about 1.0.11; recorded: 1.0.0): "mcp__" + server key + "__" + tool,
	// both raw ("mcp__foo.bar__deploy.prod", "mcp__lit__搜索文献").
	ClaudeEraRaw ClaudeEra = iota
	// ClaudeEraServerNormalized (about 1.0.11 to 1.0.83; recorded: 1.0.51): the server key is
	// normalized (ClaudeNormalize), the tool is raw ("mcp__foo_bar__deploy.prod",
	// "mcp__lit__get+data").
	ClaudeEraServerNormalized
	// ClaudeEraNormalized (about 1.0.84 to 2.1.49; recorded: 2.0.14): both parts normalized
	// ("mcp__foo_bar__deploy_prod", "mcp__lit______"); a name two tools share is offered
	// twice.
	ClaudeEraNormalized
	// ClaudeEraDedup (about 2.1.50 on; recorded: 2.1.90, 2.1.332): named as ClaudeEraNormalized,
	// but a name two tools share is offered once, and calls under it reach the first tool of
	// the server's list ("mcp__lit__literature_search_pubmed" answers as
	// "literature.search_pubmed"; the raw "literature_search_pubmed" cannot be called).
	ClaudeEraDedup
)

// ClaudeEras lists the eras in release order.
var ClaudeEras = []ClaudeEra{ClaudeEraRaw, ClaudeEraServerNormalized, ClaudeEraNormalized, ClaudeEraDedup}

// ClaudeLatestVersion is the newest Claude Code release whose naming was recorded (the default
// "current release" of repair and audit).
const ClaudeLatestVersion = "2.1.332"

// ClaudeRecordedVersions are the releases the eras were recorded with, oldest first.
var ClaudeRecordedVersions = []string{"1.0.0", "1.0.51", "2.0.14", "2.1.90", "2.1.332"}

// claudeEraStarts is the first release of each era after ClaudeEraRaw.
var claudeEraStarts = []struct {
	era ClaudeEra
	v   [3]int
}{
	{ClaudeEraServerNormalized, [3]int{1, 0, 11}},
	{ClaudeEraNormalized, [3]int{1, 0, 84}},
	{ClaudeEraDedup, [3]int{2, 1, 50}},
}

// String is the era's name as reports print it ("raw", "server-normalized", "normalized",
// "dedup").
func (e ClaudeEra) String() string {
	switch e {
	case ClaudeEraRaw:
		return "raw"
	case ClaudeEraServerNormalized:
		return "server-normalized"
	case ClaudeEraNormalized:
		return "normalized"
	case ClaudeEraDedup:
		return "dedup"
	}
	return fmt.Sprintf("ClaudeEra(%d)", int(e))
}

// ErrClaudeVersion is returned (wrapped) by ParseClaudeVersion and ClaudeEraOf for a version
// that is not "MAJOR.MINOR.PATCH" with decimal parts.
var ErrClaudeVersion = errors.New("not a Claude Code version (want MAJOR.MINOR.PATCH)")

// ParseClaudeVersion parses a Claude Code release as the "version" field of its session lines
// spells it: "MAJOR.MINOR.PATCH" with decimal parts, optionally followed by a pre-release or
// build suffix ("-beta.1", "+abc", " (Claude Code)") that is ignored.
func ParseClaudeVersion(v string) ([3]int, error) {
	var out [3]int
	s := strings.TrimSpace(v)
	for i := 0; i < 3; i++ {
		j := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == 0 || j > 9 {
			return out, fmt.Errorf("%q: %w", v, ErrClaudeVersion)
		}
		n, _ := strconv.Atoi(s[:j])
		out[i] = n
		s = s[j:]
		if i < 2 {
			if !strings.HasPrefix(s, ".") {
				return out, fmt.Errorf("%q: %w", v, ErrClaudeVersion)
			}
			s = s[1:]
		}
	}
	if s != "" && !strings.ContainsAny(s[:1], "-+ ") {
		return out, fmt.Errorf("%q: %w", v, ErrClaudeVersion)
	}
	return out, nil
}

// CompareClaudeVersions orders two parsed releases: -1, 0 or +1.
func CompareClaudeVersions(a, b [3]int) int {
	for i := range a {
		switch {
		case a[i] < b[i]:
			return -1
		case a[i] > b[i]:
			return 1
		}
	}
	return 0
}

// ClaudeEraOf returns the naming era of a Claude Code release ("1.0.51" → ClaudeEraServerNormalized;
// see the era constants for the boundaries). A version ParseClaudeVersion rejects gives an error
// wrapping ErrClaudeVersion.
func ClaudeEraOf(version string) (ClaudeEra, error) {
	v, err := ParseClaudeVersion(version)
	if err != nil {
		return ClaudeEraDedup, err
	}
	era := ClaudeEraRaw
	for _, s := range claudeEraStarts {
		if CompareClaudeVersions(v, s.v) >= 0 {
			era = s.era
		}
	}
	return era, nil
}

// ClaudeServerPrefixIn is the "mcp__<server>__" prefix of a server's tool names in era e: the
// raw key in ClaudeEraRaw, ClaudePrefix(server) (normalized) from ClaudeEraServerNormalized on.
func ClaudeServerPrefixIn(e ClaudeEra, server string) string {
	if e == ClaudeEraRaw {
		return Prefix + server + "__"
	}
	return ClaudePrefix(server)
}

// ClaudeNameIn is the name Claude Code of era e gives the raw MCP tool (server key, tool):
//
//	ClaudeEraRaw               "mcp__" + server + "__" + tool
//	ClaudeEraServerNormalized  ClaudePrefix(server) + tool
//	ClaudeEraNormalized,Dedup  ClaudeName(server, tool)
//
// Vectors (fixtures/claude-real/README.md): ("foo.bar", "deploy.prod") → 1.0.51
// "mcp__foo_bar__deploy.prod", 2.1.332 "mcp__foo_bar__deploy_prod"; ("lit", "搜索文献") → 1.0.51
// "mcp__lit__搜索文献", 2.1.332 "mcp__lit______" (14 UTF-16 units both).
func ClaudeNameIn(e ClaudeEra, server, tool string) string {
	switch e {
	case ClaudeEraRaw:
		return Raw(server, tool)
	case ClaudeEraServerNormalized:
		return ClaudePrefix(server) + tool
	}
	return ClaudeName(server, tool)
}

// ClaudeTool is one raw MCP tool as Claude Code's configuration knows it: the server key of
// mcpServers (~/.claude.json, .mcp.json, --mcp-config) and the tool name the server lists.
type ClaudeTool struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// ClaudeOffer is one entry of the tool list a release offers the model: the name and every raw
// tool of the list that spells it in that era, in list order. The first tool answers calls made
// under the name (recorded with 2.1.332, where "mcp__lit__literature_search_pubmed" reaches
// "literature.search_pubmed"; assumed for earlier eras); with several, the others are never
// reached under it.
type ClaudeOffer struct {
	Name  string       `json:"name"`
	Tools []ClaudeTool `json:"tools"`
}

// ClaudeOffered is the MCP part of the tool list Claude Code of era e offers for tools (the
// servers' tools in configuration order, each server's in the order it lists them): one entry
// per tool before ClaudeEraDedup (a shared name appears once per tool: 1.0.51 offered 10 names
// for the fixture's 10 tools, 2.0.14 offered "mcp__lit__literature_search_pubmed" twice), one
// entry per distinct name from ClaudeEraDedup on (2.1.332 offered 9). Every entry lists all the
// tools sharing its name, first the one that answers. Names are not capped or hashed.
func ClaudeOffered(e ClaudeEra, tools []ClaudeTool) []ClaudeOffer {
	byName := map[string][]ClaudeTool{}
	var order []string
	for _, t := range tools {
		n := ClaudeNameIn(e, t.Server, t.Tool)
		if _, seen := byName[n]; !seen {
			order = append(order, n)
		}
		byName[n] = append(byName[n], t)
	}
	var out []ClaudeOffer
	if e >= ClaudeEraDedup {
		for _, n := range order {
			out = append(out, ClaudeOffer{Name: n, Tools: byName[n]})
		}
		return out
	}
	for _, t := range tools {
		n := ClaudeNameIn(e, t.Server, t.Tool)
		out = append(out, ClaudeOffer{Name: n, Tools: byName[n]})
	}
	return out
}

// ClaudeToolsNamed returns the raw tools of tools that era e names name, in list order (nil when
// none): the candidates for the raw identity of a stored name written by that era. Two or more
// means the name is shared (the first answers).
func ClaudeToolsNamed(e ClaudeEra, name string, tools []ClaudeTool) []ClaudeTool {
	var out []ClaudeTool
	for _, t := range tools {
		if ClaudeNameIn(e, t.Server, t.Tool) == name {
			out = append(out, t)
		}
	}
	return out
}
