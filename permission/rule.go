package permission

import (
	"regexp"
	"strings"
	"unicode"
)

// SpecifierKind tells how a rule's parenthesised specifier is matched (Qwen Code
// rule-parser.ts getSpecifierKind).
type SpecifierKind string

// Specifier kinds. KindNone is used when the rule has no (or an empty) specifier.
const (
	KindNone    SpecifierKind = ""
	KindCommand SpecifierKind = "command" // shell tools: run_shell_command, monitor
	KindPath    SpecifierKind = "path"    // read and edit tools
	KindDomain  SpecifierKind = "domain"  // web_fetch
	KindLiteral SpecifierKind = "literal" // everything else, MCP tools included
)

// ParamMatcher is one "key:value" part of a literal specifier (Agent(coder,model:opus)).
// MCP rules never get one.
type ParamMatcher struct {
	Key          string
	ValuePattern string
}

// Rule is one parsed permission rule (Qwen Code PermissionRule, qwen-reference.md §2.3).
type Rule struct {
	// Raw is the trimmed rule text as written in settings; deny messages quote it.
	Raw string
	// ToolName is the canonical tool name (ResolveToolName of the part before "("). MCP
	// rules and wildcards are kept as written.
	ToolName string
	// Specifier is the text inside the parentheses ("" = none, which includes "()").
	Specifier string
	// Kind is the specifier kind; KindNone when Specifier was empty in the source.
	Kind SpecifierKind
	// ParamMatchers are the key:value parts of a literal non-MCP specifier.
	ParamMatchers []ParamMatcher
	// Invalid marks a rule with "(" but no closing ")" at the end; it never matches.
	Invalid bool
}

// ParseRule is Qwen Code's parseRule (rule-parser.ts, qwen-reference.md §2.3):
//   - the input is trimmed with JavaScript's String.prototype.trim;
//   - without "(" the whole text is the tool name (ResolveToolName applied);
//   - with "(" but no trailing ")" the rule is Invalid (it never matches);
//   - otherwise the text between the first "(" and the final ")" is the specifier; empty
//     parentheses mean no specifier;
//   - ":*" becomes " *" only inside command specifiers (Bash(git:*)), so
//     "mcp__foo:bar_*" is read literally;
//   - literal specifiers of non-MCP tools split "key:value" parts into ParamMatchers.
//
// ParseRule never fails: every string is some rule.
func ParseRule(input string) Rule {
	raw := jsTrim(input)
	open := strings.IndexByte(raw, '(')
	if open == -1 {
		return Rule{Raw: raw, ToolName: ResolveToolName(raw)}
	}
	toolName := ResolveToolName(jsTrim(raw[:open]))
	if !strings.HasSuffix(raw, ")") {
		return Rule{Raw: raw, ToolName: toolName, Invalid: true}
	}
	spec := raw[open+1 : len(raw)-1] // raw ends in ")" after the "(", so open < len(raw)-1
	r := Rule{Raw: raw, ToolName: toolName}
	if spec == "" {
		return r
	}
	r.Kind = specifierKind(toolName)
	if r.Kind == KindCommand {
		spec = strings.ReplaceAll(spec, ":*", " *")
	}
	r.Specifier = spec
	if r.Kind == KindLiteral && !strings.HasPrefix(toolName, "mcp__") && strings.Contains(spec, ":") {
		r.Specifier, r.ParamMatchers = splitParamMatchers(spec)
	}
	return r
}

// ParseRules parses every non-blank entry of raws (Qwen Code parseRules drops empty and
// whitespace-only entries). Invalid rules are kept (marked Invalid) so callers can report them.
func ParseRules(raws []string) []Rule {
	rules := make([]Rule, 0, len(raws))
	for _, s := range raws {
		if jsTrim(s) == "" {
			continue
		}
		rules = append(rules, ParseRule(s))
	}
	return rules
}

var paramKey = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// splitParamMatchers splits "coder,model:opus" into specifier "coder" and matcher
// {model, opus}. Without any valid key:value part the specifier is returned unchanged.
func splitParamMatchers(spec string) (string, []ParamMatcher) {
	var plain []string
	var matchers []ParamMatcher
	for _, part := range strings.Split(spec, ",") {
		part = jsTrim(part)
		if colon := strings.IndexByte(part, ':'); colon > 0 {
			key := jsTrim(part[:colon])
			if paramKey.MatchString(key) {
				matchers = append(matchers, ParamMatcher{Key: key, ValuePattern: jsTrim(part[colon+1:])})
				continue
			}
		}
		plain = append(plain, part)
	}
	if len(matchers) == 0 {
		return spec, nil
	}
	return jsTrim(strings.Join(plain, ",")), matchers
}

// jsTrim is JavaScript's String.prototype.trim: it strips Unicode White_Space and U+FEFF,
// but not U+0085 (which Go's unicode.IsSpace includes).
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return r == '\uFEFF' || (r != '\u0085' && unicode.IsSpace(r))
	})
}

// toolAliases maps the built-in tool names and aliases users write in rules to canonical
// tool names (Qwen Code rule-parser.ts TOOL_NAME_ALIASES, the common built-ins). Names not
// listed, every mcp__ name and "*" among them, resolve to themselves.
var toolAliases = map[string]string{
	"run_shell_command": "run_shell_command", "Shell": "run_shell_command", "ShellTool": "run_shell_command", "Bash": "run_shell_command",
	"monitor": "monitor", "Monitor": "monitor", "MonitorTool": "monitor",
	"edit": "edit", "Edit": "edit", "EditTool": "edit", "replace": "edit",
	"write_file": "write_file", "WriteFile": "write_file", "WriteFileTool": "write_file", "Write": "write_file",
	"notebook_edit": "notebook_edit", "NotebookEdit": "notebook_edit", "NotebookEditTool": "notebook_edit",
	"read_file": "read_file", "ReadFile": "read_file", "ReadFileTool": "read_file", "Read": "read_file",
	"zoom_image": "zoom_image", "ZoomImage": "zoom_image", "ZoomImageTool": "zoom_image",
	"grep_search": "grep_search", "Grep": "grep_search", "GrepTool": "grep_search", "search_file_content": "grep_search", "SearchFiles": "grep_search",
	"glob": "glob", "Glob": "glob", "GlobTool": "glob", "FindFiles": "glob",
	"list_directory": "list_directory", "ListFiles": "list_directory", "ListFilesTool": "list_directory", "ReadFolder": "list_directory",
	"todo_write": "todo_write", "TodoList": "todo_write", "TodoWrite": "todo_write", "TodoWriteTool": "todo_write",
	"web_fetch": "web_fetch", "WebFetch": "web_fetch", "WebFetchTool": "web_fetch",
	"web_search": "web_search", "WebSearch": "web_search", "WebSearchTool": "web_search",
	"read_mcp_resource": "read_mcp_resource", "ReadMcpResource": "read_mcp_resource", "ReadMcpResourceTool": "read_mcp_resource",
	"agent": "agent", "Agent": "agent", "AgentTool": "agent", "task": "agent", "Task": "agent", "TaskTool": "agent",
	"skill": "skill", "Skill": "skill", "SkillTool": "skill",
	"exit_plan_mode": "exit_plan_mode", "ExitPlanMode": "exit_plan_mode", "ExitPlanModeTool": "exit_plan_mode",
	"enter_plan_mode": "enter_plan_mode", "EnterPlanMode": "enter_plan_mode", "EnterPlanModeTool": "enter_plan_mode",
	"lsp": "lsp", "Lsp": "lsp", "LspTool": "lsp",
	"save_memory": "save_memory", "SaveMemory": "save_memory", "SaveMemoryTool": "save_memory",
	"ask_user_question": "ask_user_question", "AskUserQuestion": "ask_user_question", "AskUserQuestionTool": "ask_user_question",
	"tool_search": "tool_search", "ToolSearch": "tool_search", "ToolSearchTool": "tool_search",
	"tool_call": "tool_call", "ToolCall": "tool_call", "ToolCallTool": "tool_call",
}

// ResolveToolName is Qwen Code's resolveToolName: the canonical name of a built-in tool alias
// (Bash → run_shell_command, Read → read_file, Edit → edit, WebFetch → web_fetch,
// Agent/Task → agent, …); any other string, every "mcp__…" name and "*" included, is returned
// unchanged. The lookup is exact and case-sensitive.
func ResolveToolName(name string) string {
	if c, ok := toolAliases[name]; ok {
		return c
	}
	return name
}

// specifierKind is Qwen Code's getSpecifierKind for a canonical tool name.
func specifierKind(canonical string) SpecifierKind {
	switch canonical {
	case "run_shell_command", "monitor":
		return KindCommand
	case "read_file", "zoom_image", "grep_search", "glob", "list_directory", "edit", "write_file", "notebook_edit":
		return KindPath
	case "web_fetch":
		return KindDomain
	}
	return KindLiteral
}

// toolMatchesRuleToolName is Qwen Code's toolMatchesRuleToolName: exact canonical name, or a
// meta-category (Read covers the read tools, Edit the edit tools, Bash also monitor).
func toolMatchesRuleToolName(ruleTool, tool string) bool {
	if ruleTool == tool {
		return true
	}
	switch ruleTool {
	case "read_file":
		return specifierKind(tool) == KindPath && !isEditTool(tool)
	case "edit":
		return isEditTool(tool)
	case "run_shell_command":
		return tool == "monitor"
	}
	return false
}

func isEditTool(tool string) bool {
	return tool == "edit" || tool == "write_file" || tool == "notebook_edit"
}
