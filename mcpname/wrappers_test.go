package mcpname

// Wrappers only the tests call (production code calls the functions they wrap).

// Sanitize is Qwen Code's sanitizeToolNameForProvider: every UTF-16 unit outside [A-Za-z0-9_-]
// becomes '_' (an emoji, two units, becomes "__"); "tool_" is prefixed when the result does not
// start with an ASCII letter. No hash, no length cap. The result is ASCII.
func Sanitize(name string) string { return SanitizeUnits(Units(name)) }

// QwenDispatch classifies a stored call of the raw identity called (as recorded with it, e.g.
// the telemetry's mcp_server_name and the tool) by QwenResolve over tools, and returns the tools
// it reaches.
func QwenDispatch(stored string, called QwenTool, tools []QwenTool) (Dispatch, []QwenTool) {
	got := QwenResolve(stored, tools)
	return QwenClassify(got, called), got
}

// CodexDispatch classifies a stored Codex call of called (nil: no invocation record names it)
// by CodexResolve.
func CodexDispatch(stored CodexName, called *CodexTool, tools []CodexTool, p CodexParams) (Dispatch, []CodexTool) {
	return CodexDispatchIn(stored, called, CodexAllocate(tools, p))
}

// Shared reports whether two or more raw tools have this name (only the first can be called).
func (o ClaudeOffer) Shared() bool { return len(o.Tools) > 1 }
