package provider

import "slices"

// asciiWhy is the unit reason of rows whose pattern admits ASCII only: every name the pattern
// accepts has as many bytes as code points as UTF-16 units, so the unit changes no verdict
// (a non-ASCII name already fails the pattern).
const asciiWhy = "the pattern admits ASCII only, so bytes = code points = UTF-16 units for every accepted name; "

// rows is the table (docs/providers.md "The table" prints it). Sources were re-checked
// where Verified is true: the error text is quoted from the public issue named in Source.
var rows = []Provider{
	{
		ID: "openai-chat", Name: "OpenAI Chat Completions",
		Source:  "https://platform.openai.com/docs/api-reference/chat/create (function.name); error quoted in https://github.com/hyper-mcp-rs/hyper-mcp/issues/99",
		Pattern: "[a-zA-Z0-9_-]+", MaxLen: 64, Unit: UnitCodePoints,
		UnitWhy: asciiWhy + "the error is a JSON Schema message, and JSON Schema maxLength counts code points",
		History: HistoryYes, HistoryPath: "messages[N].tool_calls[M].function.name",
		ErrorText: "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
		Verified:  true,
	},
	{
		ID: "openai-responses", Name: "OpenAI Responses",
		Source:  "https://platform.openai.com/docs/api-reference/responses/create (tools[].name; 64 until 2025, 128 since: issue 13's table, not re-checked)",
		Pattern: "[a-zA-Z0-9_-]+", MaxLen: 128, Unit: UnitCodePoints,
		UnitWhy: asciiWhy + "JSON Schema maxLength counts code points",
		History: HistoryYes, HistoryPath: "input[N].name",
		ErrorText: "Invalid 'input[N].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
	},
	{
		ID: "anthropic", Name: "Anthropic Messages",
		Source:  "https://docs.anthropic.com/en/api/messages (tools[].name); error quoted in https://github.com/modelcontextprotocol/modelcontextprotocol/issues/1345; tool_reference ≤ 64 from issue 13, not re-checked",
		Pattern: "[a-zA-Z0-9_-]+", MaxLen: 128, RefMaxLen: 64, Unit: UnitCodePoints,
		UnitWhy: asciiWhy + "the {1,128} quantifier of the quoted pattern counts characters",
		History: HistoryUnknown, HistoryPath: "messages[N].content[M].name (tool_use)",
		ErrorText: "tools.16.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
		Verified:  true,
	},
	{
		ID: "bedrock", Name: "AWS Bedrock Converse",
		Source:  "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolSpecification.html; error quoted in https://github.com/openclaw/openclaw/pull/12949; history: https://github.com/NousResearch/hermes-agent/pull/90016",
		Pattern: "[a-zA-Z0-9_-]+", MaxLen: 64, Unit: UnitCodePoints,
		UnitWhy: asciiWhy + "AWS models are Smithy shapes, whose @length counts Unicode code points",
		History: HistoryYes, HistoryPath: "messages.N.member.content.M.member.toolUse.name",
		ErrorText: "Value at '...toolUse.name' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
		Verified:  true,
	},
	{
		ID: "gemini", Name: "Google Gemini / Vertex AI",
		Source:    "https://ai.google.dev/api/caching#FunctionDeclaration; error quoted in https://github.com/cline/cline/issues/7339; history names (functionCall and functionResponse) checked as the stand-in of fixtures/gemini-real does (STRICT=1: contents[1].parts[6].function_call.name refused), not verified against the real API",
		FirstChar: "[A-Za-z_]", Pattern: "[A-Za-z0-9_.:-]+", MaxLen: 64, Unit: UnitCodePoints,
		UnitWhy: asciiWhy + "the error says \"maximum length of 64\" without a unit; characters assumed",
		History: HistoryUnknown, HistoryPath: "contents[N].parts[M].functionCall.name, contents[N].parts[M].functionResponse.name",
		ErrorText: "Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.",
		Verified:  true,
	},
	{
		ID: "deepseek", Name: "DeepSeek",
		Source:  "https://api-docs.deepseek.com/api/create-chat-completion (tools[].function.name; issue 13's table, not re-checked)",
		Pattern: "[a-zA-Z0-9_-]+", MaxLen: 64, Unit: UnitCodePoints,
		UnitWhy: asciiWhy + "OpenAI-compatible JSON Schema assumed",
		History: HistoryUnknown, HistoryPath: "messages[N].tool_calls[M].function.name",
	},
	{
		ID: "dashscope", Name: "Alibaba DashScope (Qwen)",
		Source: "reserved name: error quoted in https://github.com/tailcallhq/forgecode/issues/1580 and QwenLM/qwen-code#384 (open); max 64 from issue 13's table, not re-checked",
		MaxLen: 64, Unit: UnitUTF16,
		UnitWhy:   "no character rule is known, so the unit matters and is not documented: UTF-16 units are counted, the stricter of code points and UTF-16 (an astral character counts 2) and the unit Qwen Code caps its names in (JavaScript .length)",
		Reserved:  []string{"search"},
		History:   HistoryUnknown,
		ErrorText: "<400> InternalError.Algo.InvalidParameter: Tool names are not allowed to be [search]",
		Verified:  true,
	},
	{
		ID: "mistral", Name: "Mistral",
		Source:  "https://docs.mistral.ai/api/ (function.name; issue 13's table, not re-checked)",
		Pattern: "[a-zA-Z0-9_-]+", MaxLen: 64, Unit: UnitCodePoints,
		UnitWhy: asciiWhy + "characters assumed",
		History: HistoryUnknown,
	},
	{
		ID: "kimi", Name: "Kimi (Moonshot)",
		Source:    "error quoted in https://github.com/MoonshotAI/kimi-cli/issues/1773",
		FirstChar: "[A-Za-z]", Pattern: "[A-Za-z0-9_-]+",
		UnitWhy:   "no maximum length is known",
		History:   HistoryUnknown,
		ErrorText: "function name is invalid, must start with a letter and can contain letters, numbers, underscores, and dashes",
		Verified:  true,
	},
	{
		ID: "xai", Name: "xAI",
		Source:   "https://docs.x.ai/docs/guides/function-calling (tool_search is a server-side tool; issue 13's table, not re-checked)",
		Reserved: []string{"tool_search"},
		UnitWhy:  "no maximum length is known",
		History:  HistoryUnknown,
	},
}

var table = func() []*Provider {
	out := make([]*Provider, len(rows))
	for i := range rows {
		p := rows[i]
		if err := p.compile(); err != nil {
			panic("provider table row " + p.ID + ": " + err.Error())
		}
		out[i] = &p
	}
	return out
}()

// Table returns the rows in table order. The providers are shared: do not modify them.
func Table() []*Provider { return slices.Clone(table) }

// ByID returns the row with that ID, nil when there is none.
func ByID(id string) *Provider {
	for _, p := range table {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// IDs returns the IDs of the table, in order.
func IDs() []string {
	out := make([]string, len(table))
	for i, p := range table {
		out[i] = p.ID
	}
	return out
}
