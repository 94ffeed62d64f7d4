package mcpconfig

import (
	"regexp"
	"sort"
	"strings"
)

// Env is an injected process environment (name → value). Logic in this package never reads
// os.Getenv; the command layer builds an Env with EnvFromList(os.Environ()) and tests build
// one literally. A nil Env defines no variable.
type Env map[string]string

// EnvFromList builds an Env from "NAME=value" entries (the shape of os.Environ). Entries
// without "=" are ignored; a later entry for the same name wins.
func EnvFromList(list []string) Env {
	env := make(Env, len(list))
	for _, kv := range list {
		if i := strings.IndexByte(kv, '='); i > 0 {
			env[kv[:i]] = kv[i+1:]
		}
	}
	return env
}

// Lookup returns the value of name and whether it is defined (an empty value is defined).
func (e Env) Lookup(name string) (string, bool) {
	v, ok := e[name]
	return v, ok
}

// List returns the environment as sorted "NAME=value" entries (the shape exec.Cmd.Env wants).
func (e Env) List() []string {
	out := make([]string, 0, len(e))
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// envVarPattern is the $NAME / ${NAME} reference of a config string: /\$(?:(\w+)|{([^}]+)})/g.
// Go's \w is ASCII [0-9A-Za-z_], as JavaScript's is without the u flag.
var envVarPattern = regexp.MustCompile(`\$(?:(\w+)|\{([^}]+)\})`)

// Expand replaces $NAME and ${NAME} in s with their values from env, the way the agents'
// config loaders resolve every string value of a file they load. An undefined variable is
// left exactly as written; a variable defined as "" expands to "". The replacement is literal
// (a value containing "$" is not expanded again). never lists names left as written whatever
// env holds (an agent's internal secrets; nil for none). Object keys are never expanded, only
// values.
func Expand(s string, env Env, never map[string]bool) string {
	if !strings.Contains(s, "$") {
		return s
	}
	return envVarPattern.ReplaceAllStringFunc(s, func(m string) string {
		name := m[1:]
		if strings.HasPrefix(name, "{") {
			name = name[1 : len(name)-1]
		}
		if never[name] {
			return m
		}
		if v, ok := env.Lookup(name); ok {
			return v
		}
		return m
	})
}
