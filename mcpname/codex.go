package mcpname

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// OpenAI Codex CLI MCP tool naming (schemes.md §A). Codex lengths count UTF-8 bytes and its
// sanitizers walk Unicode scalar values (Rust chars()), unlike the Qwen Code functions of this
// package, which count UTF-16 code units. Everything here is pure: no I/O, no clock, no state.

const (
	// CodexE0Marker joins server and tool in era E0 (schemes.md §A.4, first Rust MCP client).
	CodexE0Marker = "__OAI_CODEX_MCP__"
	// CodexFlatMax is the byte budget of the E1–E3 flat names (MAX_TOOL_NAME_LENGTH = 64).
	CodexFlatMax = 64
	// CodexFlatHashLen is the width of the full lower-case hex SHA-1 that E1–E3 append.
	CodexFlatHashLen = 40
	// CodexSuffixHexLen is the number of SHA-1 hex digits in an E4+ suffix (CALLABLE_NAME_HASH_LEN).
	CodexSuffixHexLen = 12
	// CodexSuffixLen is the length of an E4+ suffix: "_" and 12 hex digits.
	CodexSuffixLen = 1 + CodexSuffixHexLen
	// CodexDelimiter joins namespace and name in E5/E6 model-visible and flat names
	// (MCP_TOOL_NAME_DELIMITER, codex-rs/codex-mcp/src/tools.rs).
	CodexDelimiter = "__"

	// ResponsesNameMax is the current OpenAI Responses API limit on tools[].name (128 since
	// codex PR #39594, issue #46188; schemes.md §D). It was 64 in 2025.
	ResponsesNameMax = 128
	// ChatCompletionsNameMax is the OpenAI Chat Completions limit on tools[].function.name, also
	// the limit of Bedrock, DeepSeek and Anthropic tool_reference (schemes.md §D).
	ChatCompletionsNameMax = 64
)

// ErrCodexCutInsideRune reports that an E1/E2 flat name would be cut at byte 24 inside a
// multi-byte UTF-8 sequence. Codex sliced the Rust string there and panicked, so no session
// can hold such a name (schemes.md §A.4, E1/E2 pseudocode).
var ErrCodexCutInsideRune = errors.New("codex flat name cut inside a UTF-8 sequence (Codex panicked)")

// ErrCodexEra reports an era that the called function does not implement (for example E5 given
// to CodexQualifyFlat, or E2 given to CodexParamsFor).
var ErrCodexEra = errors.New("unsupported codex naming era")

// CodexTool is the raw identity of one MCP tool as Codex sees it: the config key of the server
// ([mcp_servers.<KEY>], which must pass CodexServerNameValid) and the tool name from tools/list.
// The connector fields of Codex's ToolInfo (connector_id, the codex_apps callable namespace)
// are not modelled: codex_apps (ChatGPT connectors) is out of scope (schemes.md §A.4 notes), so
// the connector id is always empty and raw_callable_name == raw_mcp_tool_name == Tool.
type CodexTool struct {
	Server string
	Tool   string
}

// CodexEra names a Codex naming era (schemes.md §A.2).
type CodexEra string

// The Codex naming eras of schemes.md §A.2, oldest first.
const (
	CodexE0  CodexEra = "E0"  // <server>__OAI_CODEX_MCP__<tool>, unchecked (≈May–Jul 2025)
	CodexE1  CodexEra = "E1"  // <server>__<tool>, 24 bytes + SHA-1 over 64 (PR #1571)
	CodexE2  CodexEra = "E2"  // mcp__<server>__<tool>, as E1 (PR #5309, 2025-10-18)
	CodexE3  CodexEra = "E3"  // E2 sanitized to [A-Za-z0-9_-], SHA-1 of the raw (PR #8694)
	CodexE4  CodexEra = "E4"  // allocator, namespace mcp__<server>__ (by PR #14605)
	CodexE4b CodexEra = "E4b" // E4, every call carries the namespace (PR #17404)
	CodexE5  CodexEra = "E5"  // allocator, namespace mcp__<server>, "__" counted (PR #21576)
	CodexE6  CodexEra = "E6"  // E5 with MAX 128 and non_prefixed_mcp_tool_servers (PR #39594)
)

// CodexServerNameValid reports whether server passes Codex's validate_mcp_server_name gate,
// ^[a-zA-Z0-9_-]+$ (codex-rs/codex-mcp/src/mcp_connection_manager.rs; schemes.md §A.3). A
// server failing it never starts, so none of its tools is ever named.
func CodexServerNameValid(server string) bool {
	if server == "" {
		return false
	}
	for i := 0; i < len(server); i++ {
		if !isCodexE3Char(server[i]) {
			return false
		}
	}
	return true
}

// CodexSanitize is SANITIZE of schemes.md §A.3, Codex's sanitize_responses_api_tool_name from
// E4 on (codex-rs/codex-mcp/src/mcp/mod.rs): every Unicode scalar value that is not ASCII
// alphanumeric or '_' becomes one '_' ("你好" → "__"); an empty result becomes "_". The result
// is ASCII, so its byte and char lengths agree. An invalid UTF-8 byte (impossible in Rust)
// counts as one scalar.
func CodexSanitize(s string) string { return codexSanitize(s, false) }

// CodexSanitizeE3 is SANITIZE_E3 of schemes.md §A.3 (era E3, codex-rs/core/src/
// mcp_connection_manager.rs @ 00302de7): like CodexSanitize but '-' is kept.
func CodexSanitizeE3(s string) string { return codexSanitize(s, true) }

func codexSanitize(s string, keepHyphen bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < utf8.RuneSelf && (isCodexChar(byte(r)) || keepHyphen && r == '-') {
			b.WriteByte(byte(r))
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// CodexFlatE0 is the era E0 name: server + "__OAI_CODEX_MCP__" + tool, with no check at all
// (schemes.md §A.4).
func CodexFlatE0(server, tool string) string { return server + CodexE0Marker + tool }

// CodexFlatE1 is the era E1 name of one tool (schemes.md §A.4, PR #1571): server + "__" + tool;
// when that is longer than 64 bytes, its first 24 bytes followed by the 40-hex SHA-1 of the whole
// name (exactly 64 bytes). Nothing is sanitized. It fails with ErrCodexCutInsideRune when byte 24
// falls inside a multi-byte character, where Codex panicked. Listing-order drops are
// CodexQualifyFlat's business.
func CodexFlatE1(server, tool string) (string, error) {
	return codexFlatHashed(server + CodexDelimiter + tool)
}

// CodexFlatE2 is the era E2 name of one tool (schemes.md §A.4, PR #5309): as CodexFlatE1 over
// "mcp__" + server + "__" + tool, e.g. ("lit", "get_data_for_a_specific_location_and_date_range_extended")
// → "mcp__lit__get_data_for_a" + "c352d8d5b3162dc1c56186bee052bd46cca7a385".
func CodexFlatE2(server, tool string) (string, error) {
	return codexFlatHashed(Prefix + server + CodexDelimiter + tool)
}

func codexFlatHashed(raw string) (string, error) {
	if len(raw) <= CodexFlatMax {
		return raw, nil
	}
	cut := CodexFlatMax - CodexFlatHashLen
	if !utf8.RuneStart(raw[cut]) {
		return "", fmt.Errorf("codex flat name %q: %w", raw, ErrCodexCutInsideRune)
	}
	return raw[:cut] + codexSHA1Hex(raw), nil
}

// CodexFlatE3 is the era E3 name of one tool (schemes.md §A.4, PR #8694,
// codex-rs/core/src/mcp_connection_manager.rs @ 00302de7): raw = "mcp__" + server + "__" + tool
// is sanitized with CodexSanitizeE3; when longer than 64 bytes, its first 24 chars are followed
// by the 40-hex SHA-1 of the raw (unsanitized) string. Always ASCII and at most 64 bytes.
func CodexFlatE3(server, tool string) string {
	raw := Prefix + server + CodexDelimiter + tool
	name := CodexSanitizeE3(raw)
	if len(name) > CodexFlatMax {
		name = name[:CodexFlatMax-CodexFlatHashLen] + codexSHA1Hex(raw)
	}
	return name
}

// CodexDrop says why a flat-era qualification dropped a tool.
type CodexDrop string

// Reasons a flat era (E1–E3) leaves a tool out of the model's tool list.
const (
	// CodexDropDuplicate: the same raw identity was listed earlier.
	CodexDropDuplicate CodexDrop = "duplicate"
	// CodexDropNameTaken: an earlier, different tool already holds the name (E3: "read.file" and
	// "read_file" on one server; E1/E2: e.g. server "a" tool "b__c" vs server "a__b" tool "c").
	CodexDropNameTaken CodexDrop = "name-taken"
	// CodexDropPanic: the E1/E2 cut fell inside a character; Codex panicked (ErrCodexCutInsideRune).
	CodexDropPanic CodexDrop = "panic"
)

// CodexFlatName is the outcome for one listed tool in a flat era: its Name, or the reason it
// was dropped (Name is then "").
type CodexFlatName struct {
	Tool    CodexTool
	Name    string
	Dropped CodexDrop
}

// CodexQualifyFlat names tools in listing order as Codex's flat eras did (schemes.md §A.4):
// E0 names every tool and drops nothing; E1/E2 keep the first tool holding a name and drop later
// ones; E3 drops exact raw duplicates, then sanitized clashes (dropped, never renamed). The
// result has one entry per input tool, in input order. Any other era fails with ErrCodexEra:
// E4+ allocate over the whole set, see CodexAllocate.
func CodexQualifyFlat(era CodexEra, tools []CodexTool) ([]CodexFlatName, error) {
	switch era {
	case CodexE0, CodexE1, CodexE2, CodexE3:
	default:
		return nil, fmt.Errorf("qualify codex flat names for era %q: %w", era, ErrCodexEra)
	}
	out := make([]CodexFlatName, 0, len(tools))
	seenTool := make(map[CodexTool]bool, len(tools))
	used := make(map[string]bool, len(tools))
	for _, t := range tools {
		r := CodexFlatName{Tool: t}
		var err error
		switch era {
		case CodexE0:
			r.Name = CodexFlatE0(t.Server, t.Tool)
			out = append(out, r)
			continue
		case CodexE1:
			r.Name, err = CodexFlatE1(t.Server, t.Tool)
		case CodexE2:
			r.Name, err = CodexFlatE2(t.Server, t.Tool)
		default: // CodexE3
			r.Name = CodexFlatE3(t.Server, t.Tool)
		}
		switch {
		case err != nil:
			r.Name, r.Dropped = "", CodexDropPanic
		case seenTool[t]:
			r.Name, r.Dropped = "", CodexDropDuplicate
		case used[r.Name]:
			r.Name, r.Dropped = "", CodexDropNameTaken
		default:
			used[r.Name] = true
		}
		seenTool[t] = true
		out = append(out, r)
	}
	return out, nil
}

// CodexNameAccepted reports whether name matches ^[a-zA-Z0-9_-]{1,max}$, the tool-name rule of
// the OpenAI APIs (schemes.md §D): pass ResponsesNameMax (128) for the Responses API today, or
// ChatCompletionsNameMax (64) for Chat Completions and the other 64-limited providers. For a
// Responses namespace tool, check the model-visible join CodexStoredName (E5/E6:
// namespace + "__" + name), since the limit applies to it.
func CodexNameAccepted(name string, max int) bool {
	if name == "" || len(name) > max {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isCodexE3Char(name[i]) {
			return false
		}
	}
	return true
}

// CodexCallForm is the shape of a stored Codex function_call, which bounds its naming era
// (schemes.md §A.6, §E item 3). The exact flat era (E0–E4) comes from session_meta.cli_version or the
// date, not from the name.
type CodexCallForm int

// The shapes of a Codex function_call.
const (
	// CodexFormFlat: no namespace; the name is the whole model string (eras E0–E4).
	CodexFormFlat CodexCallForm = iota + 1
	// CodexFormE4b: namespace ending in "__" (mcp__github__ + create_issue): era E4b, and E4's
	// deferred (tool_search) tools. The model string is namespace + name.
	CodexFormE4b
	// CodexFormE5: namespace without the trailing "__" (mcp__github / create_issue): eras E5/E6.
	// The model string is namespace + "__" + name.
	CodexFormE5
)

// CodexCallFormOf tells the shape of a stored function_call from its namespace field ("" when
// absent). A namespace ending in "__" is E4b; note that an E5/E6 namespace whose sanitized
// server key itself ends in "__" looks the same, so use cli_version when it matters.
func CodexCallFormOf(namespace string) CodexCallForm {
	switch {
	case namespace == "":
		return CodexFormFlat
	case strings.HasSuffix(namespace, CodexDelimiter):
		return CodexFormE4b
	default:
		return CodexFormE5
	}
}

// Eras lists the eras that can have written a call of this shape (schemes.md §A.6).
func (f CodexCallForm) Eras() []CodexEra {
	switch f {
	case CodexFormFlat:
		return []CodexEra{CodexE0, CodexE1, CodexE2, CodexE3, CodexE4}
	case CodexFormE4b:
		return []CodexEra{CodexE4, CodexE4b}
	case CodexFormE5:
		return []CodexEra{CodexE5, CodexE6}
	}
	return nil
}

// String names the shape: "flat", "E4b" or "E5".
func (f CodexCallForm) String() string {
	switch f {
	case CodexFormFlat:
		return "flat"
	case CodexFormE4b:
		return "E4b"
	case CodexFormE5:
		return "E5"
	}
	return fmt.Sprintf("CodexCallForm(%d)", int(f))
}

// CodexStoredName returns the model-visible string of a stored function_call: the name alone
// (flat), namespace + name (E4b), or namespace + "__" + name (E5/E6; the join the Responses API
// synthesizes, schemes.md §A.4 notes). This is the string to check with CodexNameAccepted.
func CodexStoredName(namespace, name string) string {
	switch CodexCallFormOf(namespace) {
	case CodexFormFlat:
		return name
	case CodexFormE4b:
		return namespace + name
	default:
		return namespace + CodexDelimiter + name
	}
}

// codexSHA1Hex is SHA1HEX of schemes.md §A.3: SHA-1 over the UTF-8 bytes, 40 lower-case hex.
func codexSHA1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// codexSuffix is SUFFIX of schemes.md §A.3: "_" + the first 12 hex digits of SHA1HEX(id).
func codexSuffix(id string) string { return "_" + codexSHA1Hex(id)[:CodexSuffixHexLen] }

func isCodexChar(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
}

func isCodexE3Char(c byte) bool { return isCodexChar(c) || c == '-' }
