package permission

import (
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
)

// Identity is the producer identity of one MCP tool: the raw server key (the key of
// mcpServers in settings, any characters) and the raw tool name the server lists in
// tools/list. Qwen Code carries it as invocation.mcpIdentity {serverName, serverToolName}
// and reads the live set of them from ToolRegistry.getMcpToolIdentities (qwen-reference.md
// §1.6, §2.5).
type Identity struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// Raw returns the raw identity "mcp__<server>__<tool>" (RAW of qwen-reference.md §0).
func (id Identity) Raw() string { return mcpname.Raw(id.Server, id.Tool) }

// Tool is one MCP tool as Qwen Code's DiscoveredMCPTool builds it from its identity
// (qwen-reference.md §1.6). Build it with NewTool; the zero value is not meaningful.
type Tool struct {
	// Identity is the producer identity (raw server key, raw tool name).
	Identity Identity
	// Raw is Identity.Raw(): "mcp__" + server + "__" + tool.
	Raw string
	// Name is the registered name, mcpname.Normalize(Raw): the name the model sees and the
	// rule "Always allow" writes.
	Name string
	// Legacy is mcpname.Legacy(Raw), the name versions before the provider-safe change
	// registered (middle-truncated to 63 units when longer).
	Legacy string
	// DisabledToolAliases lists Raw (when it differs from Name) and then Legacy (when it
	// differs from both), in that order. It is ungated and used only by tools.disabled
	// (IsToolDisabled).
	DisabledToolAliases []string
	// PermissionAliases is DisabledToolAliases filtered by the publication gate: an alias
	// stays when its UTF-16 length equals len(Raw) (Raw itself or an untruncated legacy
	// reduction) or when LegacyReductionVouchesForServer(server). It feeds permission rules,
	// subagent disallowedTools and enablement gates. Empty for a verbatim registration.
	PermissionAliases []string
}

// NewTool builds the tool for server key server and raw tool name tool exactly as Qwen Code's
// DiscoveredMCPTool constructor does (qwen-reference.md §1.6): registered name, legacy name,
// ungated disabledToolAliases and gated permissionAliases. Alias slices are never nil, so an
// empty list compares equal to []string{}.
func NewTool(server, tool string) Tool {
	id := Identity{Server: server, Tool: tool}
	raw := id.Raw()
	name := mcpname.Normalize(raw)
	legacy := mcpname.Legacy(raw)

	disabled := []string{}
	if raw != name {
		disabled = append(disabled, raw)
	}
	if legacy != name && legacy != raw {
		disabled = append(disabled, legacy)
	}

	vouches := LegacyReductionVouchesForServer(server)
	rawLen := mcpname.Len(raw)
	perm := []string{}
	for _, a := range disabled {
		if mcpname.Len(a) == rawLen || vouches {
			perm = append(perm, a)
		}
	}
	return Tool{
		Identity:            id,
		Raw:                 raw,
		Name:                name,
		Legacy:              legacy,
		DisabledToolAliases: disabled,
		PermissionAliases:   perm,
	}
}

// LegacyReductionVouchesForServer is Qwen Code's legacyReductionVouchesForServer (mcp-tool.ts,
// qwen-reference.md §1.6): whether a middle-truncated legacy name still proves which server
// key produced it. With p = 5 + len(server) in UTF-16 units, the whole "__" separator must
// fit in the 28-unit legacy head window (p+2 <= 28) or the key must end exactly at its edge
// (p == 28); and the key's legacy image must contain no "__" and not end with "_". In
// effect keys of 0..21 units or exactly 23 units can vouch; 22 and >= 24 never do.
func LegacyReductionVouchesForServer(server string) bool {
	p := len(mcpname.Prefix) + mcpname.Len(server)
	if p+2 > mcpname.LegacyHeadLength && p != mcpname.LegacyHeadLength {
		return false
	}
	k := mcpname.Legacy(server)
	return !strings.Contains(k, "__") && !strings.HasSuffix(k, "_")
}

// ContextLevel says how much a caller passes to the permission layer, as in the columns of
// qwen-reference.md §3.2: the registered name only, plus the permission aliases, or plus the
// producer identity too.
type ContextLevel string

// Context levels of qwen-reference.md §3.2.
const (
	// ContextNone passes the registered name only (an "unthreaded" caller).
	ContextNone ContextLevel = "none"
	// ContextAliases passes the registered name and permissionAliases.
	ContextAliases ContextLevel = "aliases"
	// ContextProducer passes name, permissionAliases and the producer identity; this is what
	// the scheduler passes for a real MCP call.
	ContextProducer ContextLevel = "producer"
)

// Context returns the permission-check context a caller at the given level builds for t.
// An unknown level is treated as ContextProducer, the level real calls use.
func (t Tool) Context(level ContextLevel) Context {
	switch level {
	case ContextNone:
		return Context{ToolName: t.Name}
	case ContextAliases:
		return Context{ToolName: t.Name, Aliases: t.PermissionAliases}
	default:
		id := t.Identity
		return Context{ToolName: t.Name, Aliases: t.PermissionAliases, Identity: &id}
	}
}
