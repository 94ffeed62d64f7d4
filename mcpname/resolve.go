package mcpname

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
)

// String is the class name: "none", "same", "redispatch", "ambiguous".
func (d Dispatch) String() string {
	return [...]string{"none", "same", "redispatch", "ambiguous"}[d]
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

// QwenDispatch classifies a stored call of the raw identity called (as recorded with it, e.g.
// the telemetry's mcp_server_name and the tool) by QwenResolve over tools, and returns the tools
// it reaches.
func QwenDispatch(stored string, called QwenTool, tools []QwenTool) (Dispatch, []QwenTool) {
	got := QwenResolve(stored, tools)
	switch {
	case len(got) == 0:
		return DispatchNone, nil
	case len(got) > 1:
		return DispatchSeveral, got
	case got[0] == called:
		return DispatchSame, got
	}
	return DispatchOther, got
}
