package sqlite

// The built-in profiles (stores.md §3; checked against the real opencode and Codex databases in
// fixtures/ and against the crush and goose schemas of stores.md §3.1). None of these agents
// names MCP tools "mcp__<server>__<tool>": opencode writes "<server>_<tool>", crush
// "mcp_<server>_<tool>", goose "<extension>__<tool>", and Codex keeps raw identities in its
// databases; so the rewrite rule for each is the provider-safe one (only names a provider
// rejects are rewritten, with normalize).

// Opencode is opencode's opencode.db (opencode 1.18, fixtures/opencode-real): tool parts in
// part.data, their copies in the event log (message.part.updated.* events), permission rules in
// session.permission.
var Opencode = &Profile{
	Name:   "opencode",
	Agent:  "opencode",
	Detect: []string{"part.data", "message.data", "session.id"},
	Tables: []TableSpec{
		{Table: "part", Column: "data", CallScope: "session_id", Sites: []SiteSpec{
			{Path: "$.tool", When: &JSONCond{Path: "$.type", In: []string{"tool"}}, Kind: "call", CallID: "$.callID"},
		}},
		{Table: "event", Column: "data", Optional: true, CallScope: "aggregate_id",
			Where: []ColumnCond{{Column: "type", Prefix: "message.part.updated."}},
			Sites: []SiteSpec{
				{Path: "$.part.tool", When: &JSONCond{Path: "$.part.type", In: []string{"tool"}}, Kind: "call", CallID: "$.part.callID"},
			}},
		{Table: "session", Column: "permission", Sites: []SiteSpec{
			{Path: "$[*].permission", Kind: "rule"},
		}},
	},
}

// Crush is crush's .crush/crush.db: tool calls and results in messages.parts.
var Crush = &Profile{
	Name:   "crush",
	Agent:  "crush",
	Detect: []string{"messages.parts", "sessions.id"},
	Tables: []TableSpec{
		{Table: "messages", Column: "parts", CallScope: "session_id", Sites: []SiteSpec{
			{Path: "$[*].data.name", When: &JSONCond{Path: "$[*].type", In: []string{"tool_call"}}, Kind: "call", CallID: "$[*].data.id"},
			{Path: "$[*].data.name", When: &JSONCond{Path: "$[*].type", In: []string{"tool_result"}}, Kind: "response", CallID: "$[*].data.tool_call_id"},
		}},
	},
}

// gooseSites are the name sites of one goose content_json array (a Vec<MessageContent>).
var gooseSites = []SiteSpec{
	{Path: "$[*].toolCall.value.name", When: &JSONCond{Path: "$[*].type", In: []string{"toolRequest", "frontendToolRequest"}}, Kind: "call", CallID: "$[*].id"},
	{Path: "$[*].toolName", When: &JSONCond{Path: "$[*].type", In: []string{"toolConfirmationRequest"}}, CallID: "$[*].id"},
	{Path: "$[*].data.toolName", When: &JSONCond{Path: "$[*].type", In: []string{"actionRequired"}}, CallID: "$[*].data.id"},
}

// Goose is goose's sessions.db: messages.content_json, and thread_messages (schema v10+).
var Goose = &Profile{
	Name:   "goose",
	Agent:  "goose",
	Detect: []string{"messages.content_json", "sessions.id"},
	Tables: []TableSpec{
		{Table: "messages", Column: "content_json", CallScope: "session_id", Sites: gooseSites},
		{Table: "thread_messages", Column: "content_json", Optional: true, Sites: gooseSites},
	},
}

// CodexHistory is Codex's thread_history_1.sqlite: mcpToolCall items hold the raw server key and
// tool name, a ready inventory; they are reported as Snapshot.Identities and never rewritten (the
// model-facing names live in the rollout JSONL).
var CodexHistory = &Profile{
	Name:   "codex",
	Agent:  "codex",
	Detect: []string{"thread_items.item_json"},
	Tables: []TableSpec{
		{Table: "thread_items", Column: "item_json", CallScope: "thread_id", Sites: []SiteSpec{
			{Path: "$.tool", When: &JSONCond{Path: "$.type", In: []string{"mcpToolCall"}}, Identity: true, Server: "$.server", CallID: "$.id"},
		}},
	},
}

// CodexState is Codex's state_5.sqlite: no name sites, but threads.rollout_path ties each thread
// to its rollout JSONL; Scan reports threads whose rollout file is missing or named for another
// thread (see CodexThreads).
var CodexState = &Profile{
	Name:   "codex-state",
	Agent:  "codex",
	Detect: []string{"threads.rollout_path"},
	check:  checkCodexThreads,
}

// Builtins lists the built-in profiles in detection order.
var Builtins = []*Profile{Opencode, Crush, Goose, CodexHistory, CodexState}

// ProfileByName returns the built-in profile with that name, or nil.
func ProfileByName(name string) *Profile {
	for _, p := range Builtins {
		if p.Name == name {
			return p
		}
	}
	return nil
}
