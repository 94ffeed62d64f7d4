package codex

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpname"
)

// ConfigName is the name of Codex's configuration file inside its home.
const ConfigName = "config.toml"

// Home returns the Codex home directory: $CODEX_HOME when set (a leading "~/" is expanded),
// else <home>/.codex (codex-rs find_codex_home; schemes.md §A.6). It does not check that the
// directory exists.
func Home(getenv func(string) string, home string) string {
	if v := getenv("CODEX_HOME"); v != "" {
		if v == "~" {
			return home
		}
		if rest, ok := strings.CutPrefix(v, "~/"); ok {
			return filepath.Join(home, rest)
		}
		return v
	}
	return filepath.Join(home, ".codex")
}

// SessionDirs returns the directories of a Codex home that hold rollouts, in the order Codex
// lists them: sessions/ (YYYY/MM/DD/rollout-*.jsonl) and archived_sessions/ (flat or dated;
// schemes.md §A.6).
func SessionDirs(codexHome string) []string {
	return []string{filepath.Join(codexHome, "sessions"), filepath.Join(codexHome, "archived_sessions")}
}

// StateDBs returns Codex's SQLite state files that exist: state_*.sqlite and
// thread_history_*.sqlite in $CODEX_SQLITE_HOME, else the Codex home (schemes.md §A.7). They
// are read for consistency with the rollouts, never rewritten.
func StateDBs(getenv func(string) string, codexHome string) []string {
	dir := codexHome
	if v := getenv("CODEX_SQLITE_HOME"); v != "" {
		dir = v
	}
	var out []string
	for _, pat := range []string{"state_*.sqlite", "thread_history_*.sqlite"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		out = append(out, m...)
	}
	return out
}

// Server is one [mcp_servers.<KEY>] table of config.toml (codex-rs/config/src/mcp_types.rs;
// schemes.md §A.8), reduced to what naming and discovery need. Env, headers and token settings
// are secrets: they are kept for starting the server, never printed.
type Server struct {
	// Enabled is the "enabled" key (default true).
	Enabled bool
	// EnabledTools is the allow-list of raw MCP tool names; HasEnabledTools tells an absent
	// list (every tool allowed) from an empty one (none allowed).
	EnabledTools    []string
	HasEnabledTools bool
	// DisabledTools is the deny-list of raw MCP tool names, applied after the allow-list.
	DisabledTools []string

	// Transport: stdio (Command, Args, Env, Cwd) or streamable HTTP (URL, HTTPHeaders, and
	// BearerTokenEnvVar, the name of the environment variable holding a bearer token).
	Command           string
	Args              []string
	Env               map[string]string
	Cwd               string
	URL               string
	HTTPHeaders       map[string]string
	BearerTokenEnvVar string
}

// Config is what sessionfix reads from a Codex config.toml.
type Config struct {
	// Path is the file read.
	Path string
	// Servers maps each configured server key to its table.
	Servers map[string]Server
	// NonPrefixedServers is the top-level non_prefixed_mcp_tool_servers list.
	NonPrefixedServers []string
	// NonPrefixedFeature is [features] non_prefixed_mcp_tool_names.
	NonPrefixedFeature bool
	// Origin is who owns the file read (LoadConfig; mcpconfig.ReadFile): Servers hands it
	// to each server, and --discover starts none from a config another user owns or can
	// write (issue 30 finding 1).
	Origin mcpconfig.Origin
}

// ErrConfig marks a config.toml that cannot be decoded.
var ErrConfig = errors.New("invalid Codex config.toml")

// ConfigError says which config file is invalid and why. Its message never quotes a value
// from the file (values may be secrets).
type ConfigError struct {
	Path string
	Err  error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("%s: %v: %v", e.Path, ErrConfig, e.Err) }

// Unwrap returns ErrConfig and the decoder's error.
func (e *ConfigError) Unwrap() []error { return []error{ErrConfig, e.Err} }

// rawServer mirrors the TOML keys of one server table.
type rawServer struct {
	Enabled       *bool             `toml:"enabled"`
	EnabledTools  []string          `toml:"enabled_tools"`
	DisabledTools []string          `toml:"disabled_tools"`
	Command       string            `toml:"command"`
	Args          []string          `toml:"args"`
	Env           map[string]string `toml:"env"`
	Cwd           string            `toml:"cwd"`
	URL           string            `toml:"url"`
	HTTPHeaders   map[string]string `toml:"http_headers"`
	BearerEnvVar  string            `toml:"bearer_token_env_var"`
}

type rawConfig struct {
	MCPServers         map[string]rawServer `toml:"mcp_servers"`
	NonPrefixedServers []string             `toml:"non_prefixed_mcp_tool_servers"`
	Features           struct {
		NonPrefixed bool `toml:"non_prefixed_mcp_tool_names"`
	} `toml:"features"`
}

// LoadConfig reads a Codex config.toml. Keys it does not model are ignored. A missing file is an
// error wrapping fs.ErrNotExist; a file that is not valid TOML, or whose modelled keys have the
// wrong types, is a *ConfigError (its message carries the decoder's position, never a value).
func LoadConfig(path string) (*Config, error) {
	b, origin, err := mcpconfig.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read Codex config: %w", err)
	}
	c, err := ParseConfig(path, b)
	if c != nil {
		c.Origin = origin
	}
	return c, err
}

// ParseConfig decodes the content of a config.toml read from path (see LoadConfig).
func ParseConfig(path string, data []byte) (*Config, error) {
	var raw rawConfig
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		return nil, &ConfigError{Path: path, Err: redactTOMLError(data, err)}
	}
	// The decoder leaves the map empty, without an error, for mcp_servers = "…" or [ … ].
	if typ := md.Type("mcp_servers"); typ != "" && typ != "Hash" {
		return nil, &ConfigError{Path: path, Err: fmt.Errorf("%smcp_servers must be a table of servers, not %s", keyLine(data, "mcp_servers"), tomlTypeName(typ))}
	}
	c := &Config{Path: path, Servers: make(map[string]Server, len(raw.MCPServers)),
		NonPrefixedServers: raw.NonPrefixedServers, NonPrefixedFeature: raw.Features.NonPrefixed}
	for key, rs := range raw.MCPServers {
		s := Server{Enabled: rs.Enabled == nil || *rs.Enabled, EnabledTools: rs.EnabledTools,
			HasEnabledTools: md.IsDefined("mcp_servers", key, "enabled_tools"), DisabledTools: rs.DisabledTools,
			Command: rs.Command, Args: rs.Args, Env: rs.Env, Cwd: rs.Cwd, URL: rs.URL,
			HTTPHeaders: rs.HTTPHeaders, BearerTokenEnvVar: rs.BearerEnvVar}
		c.Servers[key] = s
	}
	return c, nil
}

// keyLine returns "line N: " for the first line assigning the top-level key in data
// ("key = …"), "" when there is none.
func keyLine(data []byte, key string) string {
	for i, l := range bytes.Split(data, []byte("\n")) {
		l = bytes.TrimLeft(l, " \t")
		if rest, ok := bytes.CutPrefix(l, []byte(key)); ok && bytes.HasPrefix(bytes.TrimLeft(rest, " \t"), []byte("=")) {
			return fmt.Sprintf("line %d: ", i+1)
		}
	}
	return ""
}

// tomlTypeName names a TOML type as the decoder's MetaData.Type gives it, in words.
func tomlTypeName(typ string) string {
	switch typ {
	case "String":
		return "a string"
	case "Array":
		return "an array"
	case "Integer":
		return "an integer"
	case "Float":
		return "a float"
	case "Bool":
		return "a boolean"
	case "ArrayHash":
		return "an array of tables"
	}
	return strings.ToLower(typ)
}

// redactTOMLError keeps the decoder's position and reason but not the offending line, which
// could hold a secret. The position (1-based line, column in characters) is computed from the
// byte offset of the offending byte in data: the decoder's own Line/Col are off for an error at
// a line end (the next line) or after an unterminated array (BurntSushi/toml v1.6.0).
func redactTOMLError(data []byte, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		line, col := pe.Position.Line, pe.Position.Col
		if off := pe.Position.Start; off >= 0 && off <= len(data) {
			before := data[:off]
			nl := bytes.LastIndexByte(before, '\n')
			line = 1 + bytes.Count(before, []byte{'\n'})
			col = 1 + utf8.RuneCount(before[nl+1:])
		}
		return fmt.Errorf("line %d, column %d: %s", line, col, pe.Message)
	}
	return err
}

// ServerKeys returns every configured server key that Codex would start a server for, sorted:
// keys passing mcpname.CodexServerNameValid (^[a-zA-Z0-9_-]+$). Disabled servers are included:
// the key still names the server in old rollouts.
func (c *Config) ServerKeys() []string {
	if c == nil {
		return nil
	}
	out := make([]string, 0, len(c.Servers))
	for k := range c.Servers {
		if mcpname.CodexServerNameValid(k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// InvalidServerKeys returns the configured keys Codex refuses to start ("Invalid MCP server
// name"), sorted.
func (c *Config) InvalidServerKeys() []string {
	if c == nil {
		return nil
	}
	var out []string
	for k := range c.Servers {
		if !mcpname.CodexServerNameValid(k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Registers reports whether Codex, with this configuration, registers the raw tool t with the
// model: its server is configured under a valid key and enabled, and the tool passes the
// allow-list (when present) and is not deny-listed (filtering happens before naming, so an
// unregistered tool takes no part in collisions; schemes.md §A.8). A tool of a server this
// config does not know is reported as registered: the caller decided it exists (an inventory).
func (c *Config) Registers(t mcpname.CodexTool) bool {
	if c == nil {
		return true
	}
	s, ok := c.Servers[t.Server]
	if !ok {
		return true
	}
	if !s.Enabled || !mcpname.CodexServerNameValid(t.Server) {
		return false
	}
	if s.HasEnabledTools && !slices.Contains(s.EnabledTools, t.Tool) {
		return false
	}
	return !slices.Contains(s.DisabledTools, t.Tool)
}

// Params returns the allocator parameters of the current Codex (era E6, MAX 128) under this
// configuration: every namespace gets the "mcp__" prefix except the servers listed in
// non_prefixed_mcp_tool_servers; with the feature non_prefixed_mcp_tool_names on and no list,
// no server is prefixed (prefix_mcp_tool_names() at 0.153.4: feature off OR list present;
// schemes.md §A.8 [2nd]). A nil Config gives the defaults.
func (c *Config) Params() mcpname.CodexParams {
	if c == nil {
		return mcpname.CodexE6Params()
	}
	p := mcpname.CodexE6Params(c.NonPrefixedServers...)
	if c.NonPrefixedFeature && len(c.NonPrefixedServers) == 0 {
		p.AddPrefix = false
	}
	return p
}

// IsHome reports whether dir looks like a Codex home: a directory holding config.toml, or a
// sessions/ or archived_sessions/ directory (schemes.md §A.6). A copied ~/.codex is one.
func IsHome(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, ConfigName)); err == nil && fi.Mode().IsRegular() {
		return true
	}
	for _, d := range SessionDirs(dir) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// HomeOf returns the Codex home a path given on the command line belongs to, or "" when it
// belongs to none: the directory itself when it is a home (IsHome; for a file, the directory
// holding it), else the parent of the nearest enclosing sessions/ or archived_sessions/
// directory (rollouts live in <home>/sessions/YYYY/MM/DD/ and <home>/archived_sessions/).
// The path is made absolute first; nothing is created.
func HomeOf(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	start := abs
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		start = filepath.Dir(abs)
	}
	if IsHome(start) {
		return start
	}
	for dir := start; ; {
		switch filepath.Base(dir) {
		case "sessions", "archived_sessions":
			return filepath.Dir(dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// HistoryDBs returns the thread_history_*.sqlite files directly in a Codex home, sorted (the
// databases whose mcpToolCall items record raw MCP identities; schemes.md §A.7).
func HistoryDBs(home string) []string {
	m, _ := filepath.Glob(filepath.Join(home, "thread_history_*.sqlite"))
	sort.Strings(m)
	return m
}
