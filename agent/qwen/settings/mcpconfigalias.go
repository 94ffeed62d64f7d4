package settings

import (
	"errors"

	"github.com/sessionfix/sessionfix/mcpconfig"
)

// The environment, the error and warning types and the sentinels live in mcpconfig (the
// "mcpServers" reading every agent's config shares); these names keep the settings API.
type (
	Env        = mcpconfig.Env
	ParseError = mcpconfig.ParseError
	Warning    = mcpconfig.Warning
)

// Sentinels: the same values as mcpconfig's (errors.Is matches either name).
var (
	ErrSyntax        = mcpconfig.ErrSyntax
	ErrTrailingComma = mcpconfig.ErrTrailingComma
	ErrByteOrderMark = mcpconfig.ErrByteOrderMark
	ErrNotObject     = mcpconfig.ErrNotObject
	// ErrFrontMatter: a subagent file has no "---" front matter block, or it is not YAML.
	ErrFrontMatter = errors.New("bad front matter")
)

// neverExpanded lists Qwen Code's INTERNAL_SECRET_ENV_VARS: newer releases never resolve them
// from the process environment in settings, whatever the environment holds.
var neverExpanded = map[string]bool{"QWEN_SERVER_TOKEN": true, "QWEN_DAEMON_TOKEN": true}

// Expand replaces $NAME and ${NAME} in s with their values from env, as Qwen Code does with
// every string value of a settings file when it loads it (qwen-reference.md §4.6;
// envVarResolver.ts resolveEnvVarsInString, pattern /\$(?:(\w+)|{([^}]+)})/g): mcpconfig.Expand,
// except Qwen Code's internal secrets (QWEN_SERVER_TOKEN, QWEN_DAEMON_TOKEN), which stay as
// written. An undefined variable is left exactly as written; a variable defined as "" expands
// to "". Object keys are never expanded, only values.
func Expand(s string, env Env) string { return mcpconfig.Expand(s, env, neverExpanded) }

// nonEmpty returns the value of name when it is set and not empty (JavaScript truthiness,
// which is how Qwen Code tests QWEN_HOME and the system settings overrides).
func nonEmpty(e Env, name string) (string, bool) {
	v, ok := e[name]
	return v, ok && v != ""
}
