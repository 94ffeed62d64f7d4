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

// EnvFromList is mcpconfig.EnvFromList.
func EnvFromList(list []string) Env { return mcpconfig.EnvFromList(list) }

// Expand is mcpconfig.Expand.
func Expand(s string, env Env) string { return mcpconfig.Expand(s, env) }

// nonEmpty returns the value of name when it is set and not empty (JavaScript truthiness,
// which is how Qwen Code tests QWEN_HOME and the system settings overrides).
func nonEmpty(e Env, name string) (string, bool) {
	v, ok := e[name]
	return v, ok && v != ""
}
