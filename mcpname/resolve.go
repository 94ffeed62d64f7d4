package mcpname

import (
	"cmp"
	"fmt"
	"slices"
)

// QwenTool is one MCP tool Qwen Code registers today: the raw server key (of mcpServers) and the
// raw tool name the server lists.
type QwenTool struct{ Server, Tool string }

// Dispatch is what a stored history call reaches today by the agent's own lookup.
type Dispatch int

const (
	// DispatchNone: no current tool is registered under the name the call is sent as.
	DispatchNone Dispatch = iota
	// DispatchSame: exactly one tool, the raw identity that was called.
	DispatchSame
	// DispatchOther: exactly one tool, another raw identity than the one called ("redispatch").
	DispatchOther
	// DispatchSeveral: more than one tool registers that name ("ambiguous"; Qwen Code's
	// registry keeps the last one registered).
	DispatchSeveral
	// DispatchUnattributed: exactly one tool, but which raw identity was called is not known
	// (no record names it), so same or other cannot be told.
	DispatchUnattributed
)

// String is the class name: "none", "same", "redispatch", "ambiguous", "unattributed".
func (d Dispatch) String() string {
	return [...]string{"none", "same", "redispatch", "ambiguous", "unattributed"}[d]
}

// Finding reports whether the class is one scan, check and audit report: redispatch or
// ambiguous.
func (d Dispatch) Finding() bool { return d == DispatchOther || d == DispatchSeveral }

// classifyDispatch is the class of a call of called (nil: not known) that reaches got.
func classifyDispatch[T comparable](got []T, called *T) Dispatch {
	switch {
	case len(got) == 0:
		return DispatchNone
	case len(got) > 1:
		return DispatchSeveral
	case called == nil:
		return DispatchUnattributed
	case got[0] == *called:
		return DispatchSame
	}
	return DispatchOther
}

// QwenResolve returns the tools (in the order given) a stored history call name reaches by
// Qwen Code's own lookup since the provider-safe names (0.24.x; qwen-reference.md §1 Naming:
// the converters normalize history names at send time): the restored call is sent as
// NormalizeMcp(stored), and the registry is keyed by each tool's registered name
// Normalize(Raw(server, tool)). Pure; lengths in UTF-16 units as the agent.
func QwenResolve(stored string, tools []QwenTool) []QwenTool {
	sent := NormalizeMcp(stored)
	var out []QwenTool
	for _, t := range tools {
		if Normalize(Raw(t.Server, t.Tool)) == sent {
			out = append(out, t)
		}
	}
	return out
}

// QwenClassify is the class of a call of called that reaches got (QwenResolve's result).
func QwenClassify(got []QwenTool, called QwenTool) Dispatch { return classifyDispatch(got, &called) }

// QwenCallers returns the tools of tools (restricted to server when it is not "") whose raw
// identity a stored name spells as some Qwen Code release wrote it: the raw identity itself,
// its legacy name (Legacy: 0.12.0 and earlier, dots kept, middle-truncated past 63 units) or its
// registered name (Normalize: 0.24.x). One tool: the call's raw identity; several: the stored
// spelling is shared (two servers whose keys flatten alike in Legacy, "foo:bar"/"foo_bar", or
// two long names sharing one middle truncation), so which one was called is not known.
func QwenCallers(stored, server string, tools []QwenTool) []QwenTool {
	var out []QwenTool
	for _, t := range tools {
		if server != "" && t.Server != server {
			continue
		}
		raw := Raw(t.Server, t.Tool)
		if raw == stored || Legacy(raw) == stored || Normalize(raw) == stored {
			out = append(out, t)
		}
	}
	return out
}

// ClaudeDispatch classifies a stored Claude Code call by the lookup of era now over tools (the
// configured servers' tools in configuration order): the tools ClaudeToolsNamed finds. From
// ClaudeEraDedup on, a name several tools share reaches the first of them (recorded with
// 2.1.332), so the class is then that tool's: same when it is called, redispatch when another
// tool was; ambiguous only before that era (the name is offered twice) or when called is nil.
// called nil: the raw identity is not known. Pure.
func ClaudeDispatch(now ClaudeEra, stored string, called *ClaudeTool, tools []ClaudeTool) (Dispatch, []ClaudeTool) {
	got := ClaudeToolsNamed(now, stored, tools)
	if len(got) > 1 && now >= ClaudeEraDedup && called != nil {
		return classifyDispatch(got[:1], called), got
	}
	return classifyDispatch(got, called), got
}

// CodexResolve returns the tools of tools (the whole current MCP tool set) that a stored Codex
// call reaches by Codex's lookup under allocator parameters p: the allocator (CodexAllocate,
// which hashes every member of a colliding namespace or name with a SHA-1 suffix of its own
// identity) names each tool, and a call stored with a namespace (E4b on) reaches the tool
// allocated exactly that (namespace, name); a call stored without one (flat eras E0–E3, or a
// wire without namespaces) reaches each tool whose E4 model string (Concat), E5/E6 joined
// string (Joined) or canonical flat name (Flat) equals the stored name. Sorted by server, then
// tool. Pure.
func CodexResolve(stored CodexName, tools []CodexTool, p CodexParams) []CodexTool {
	return CodexResolveIn(stored, CodexAllocate(tools, p))
}

// CodexResolveIn is CodexResolve over an allocation already made (CodexAllocate of the whole
// current tool set), for callers that look many calls up in one set.
func CodexResolveIn(stored CodexName, alloc map[CodexTool]CodexName) []CodexTool {
	var out []CodexTool
	for t, n := range alloc {
		switch {
		case stored.Namespace != "":
			if n == stored {
				out = append(out, t)
			}
		case n.Concat() == stored.Name || n.Joined() == stored.Name || n.Flat() == stored.Name:
			out = append(out, t)
		}
	}
	sortCodexTools(out)
	return out
}

// CodexDispatchIn classifies a stored Codex call of called (nil: no invocation record names it)
// by CodexResolveIn over an allocation already made (CodexAllocate of the whole current tool set).
func CodexDispatchIn(stored CodexName, called *CodexTool, alloc map[CodexTool]CodexName) (Dispatch, []CodexTool) {
	got := CodexResolveIn(stored, alloc)
	return classifyDispatch(got, called), got
}

func sortCodexTools(ts []CodexTool) {
	slices.SortFunc(ts, func(a, b CodexTool) int { return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(a.Tool, b.Tool)) })
}

// QwenNormalizingRelease is the first Qwen Code release assumed to normalize restored history
// names at send time (normalizeMcpToolName in its OpenAI- and Anthropic-compatible converters,
// qwen-reference.md §1 Naming; PR #12531). Recorded: 0.12.0 sends stored bytes verbatim, 0.24.4
// sends NormalizeMcp(stored) (real requests against fake_openai.py, issue 13 notes); releases
// between the two are placed by this boundary, which is an assumption.
const QwenNormalizingRelease = "0.24.0"

// QwenSendsNormalized reports whether Qwen Code release version ("0.24.4", "MAJOR.MINOR.PATCH"
// with an optional suffix) sends NormalizeMcp of each stored history call name to an OpenAI- or
// Anthropic-compatible endpoint (Gemini requests are never normalized). A version that does not
// parse is an error naming Qwen Code and wrapping ErrClaudeVersion (the shared version syntax).
func QwenSendsNormalized(version string) (bool, error) {
	v, err := ParseClaudeVersion(version)
	if err != nil {
		return false, qwenVersionError(version)
	}
	b, _ := ParseClaudeVersion(QwenNormalizingRelease)
	return CompareClaudeVersions(v, b) >= 0, nil
}

// qwenVersionError is a Qwen Code release that does not parse: worded for Qwen Code, it wraps
// ErrClaudeVersion (the syntax both agents' versions share).
type qwenVersionError string

func (e qwenVersionError) Error() string {
	return fmt.Sprintf("%q: not a Qwen Code version (want MAJOR.MINOR.PATCH)", string(e))
}

func (e qwenVersionError) Unwrap() error { return ErrClaudeVersion }
