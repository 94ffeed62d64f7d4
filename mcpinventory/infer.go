package mcpinventory

import (
	"strings"

	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpname"
)

// Infer builds an inventory without starting any server (audit.md §1: "Without either, server
// keys come from mcpServers and tool names from the session history where they can be
// recovered; such rows say inventory: inferred"). Every server and tool gets SourceInferred.
//
// Each configured server is listed (with its trust flag), even with no tool. A name seen in
// session history (a stored functionCall name, a bridge args.name, a telemetry
// function_name, …) yields the raw tool <rest> of the server <key> when:
//
//   - it is "mcp__" + key + "__" + rest for exactly one configured key, with rest not empty
//     (a name that two keys could produce, e.g. keys "a" and "a__b", is skipped);
//   - it does not end in "_" + 7 base-36 characters (mcpname.HasHashSuffix): a hashed
//     provider-safe name cannot be turned back into its raw name;
//   - it does not have the legacy middle-truncation shape (mcpname.IsTruncationShape): its
//     middle is lost.
//
// Known limit: a legacy spelling (mcpname.Legacy) replaced every character outside
// [A-Za-z0-9_.-] with "_", so "mcp__lit__get_data" may really be the tool "get+data"; the
// inferred tool is then the legacy spelling. Keys with such characters never match (their
// legacy spelling differs from the key). A genuine raw tool name that happens to end in "_"
// + 7 base-36 characters is not inferred. An inventory file or --discover avoids both.
func Infer(servers []mcpconfig.Server, seen []string) *Inventory {
	inv := New()
	for _, s := range servers {
		inv.Add(s.Key, s.Trust, SourceInferred)
	}
	for _, name := range seen {
		key, tool, ok := inferTool(name, servers)
		if !ok {
			continue
		}
		inv.Add(key, false, SourceInferred, tool)
	}
	return inv
}

func inferTool(name string, servers []mcpconfig.Server) (key, tool string, ok bool) {
	if !mcpname.HasPrefix(name) || mcpname.HasHashSuffix(name) || mcpname.IsTruncationShape(name) {
		return "", "", false
	}
	matches := 0
	for _, s := range servers {
		prefix := mcpname.Raw(s.Key, "")
		if rest, found := strings.CutPrefix(name, prefix); found && rest != "" && s.Key != key {
			key, tool = s.Key, rest
			matches++
		}
	}
	return key, tool, matches == 1
}
