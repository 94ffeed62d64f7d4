package codex

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpname"
)

func TestLoadConfigFixture(t *testing.T) {
	c, err := LoadConfig("../../fixtures/codex-real/config.toml")
	require.NoError(t, err)
	assert.Equal(t, []string{"foo-bar", "lit"}, c.ServerKeys())
	assert.Empty(t, c.InvalidServerKeys())
	lit := c.Servers["lit"]
	assert.True(t, lit.Enabled)
	assert.Equal(t, "python3", lit.Command)
	assert.Equal(t, []string{"/home/demo/bin/fake_mcp.py"}, lit.Args)
	assert.False(t, lit.HasEnabledTools)
	assert.Equal(t, map[string]string{"TOOLS": "get_data,deploy.prod"}, c.Servers["foo-bar"].Env)
	assert.Equal(t, mcpname.CodexE6Params(), c.Params(), "no naming knob: the default E6 parameters")
	assert.True(t, c.Registers(mcpname.CodexTool{Server: "lit", Tool: "搜索文献"}))
}

func TestLoadConfigMissing(t *testing.T) {
	_, err := LoadConfig(filepath.Join(t.TempDir(), "config.toml"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestConfigRegisters(t *testing.T) {
	c, err := ParseConfig("config.toml", []byte(`
[mcp_servers.a]
command = "a"
enabled_tools = ["x", "y"]
disabled_tools = ["y"]

[mcp_servers.b]
url = "http://127.0.0.1:1/mcp"
enabled = false

[mcp_servers.c]
command = "c"
enabled_tools = []

[mcp_servers."d.e"]
command = "d"
`))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, c.ServerKeys(), "disabled servers keep their key; invalid keys are left out")
	assert.Equal(t, []string{"d.e"}, c.InvalidServerKeys())
	tests := []struct {
		name string
		tool mcpname.CodexTool
		want bool
	}{
		{"allow-listed", mcpname.CodexTool{Server: "a", Tool: "x"}, true},
		{"allow-listed then deny-listed", mcpname.CodexTool{Server: "a", Tool: "y"}, false},
		{"not allow-listed", mcpname.CodexTool{Server: "a", Tool: "z"}, false},
		{"server disabled", mcpname.CodexTool{Server: "b", Tool: "x"}, false},
		{"empty allow-list allows nothing", mcpname.CodexTool{Server: "c", Tool: "x"}, false},
		{"invalid server key never starts", mcpname.CodexTool{Server: "d.e", Tool: "x"}, false},
		{"server the config does not know", mcpname.CodexTool{Server: "zz", Tool: "x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, c.Registers(tt.tool))
		})
	}
	var nilConfig *Config
	assert.True(t, nilConfig.Registers(mcpname.CodexTool{Server: "a", Tool: "z"}))
	assert.Nil(t, nilConfig.ServerKeys())
}

func TestConfigParams(t *testing.T) {
	tests := []struct {
		name        string
		toml        string
		addPrefix   bool
		nonPrefixed []string
	}{
		{"defaults", ``, true, nil},
		{"server list", `non_prefixed_mcp_tool_servers = ["github"]`, true, []string{"github"}},
		{"feature alone", "[features]\nnon_prefixed_mcp_tool_names = true", false, nil},
		{"feature and list: only the listed lose the prefix", "non_prefixed_mcp_tool_servers = [\"web\"]\n[features]\nnon_prefixed_mcp_tool_names = true", true, []string{"web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig("config.toml", []byte(tt.toml))
			require.NoError(t, err)
			p := c.Params()
			assert.Equal(t, mcpname.ResponsesNameMax, p.Max)
			assert.Equal(t, tt.addPrefix, p.AddPrefix)
			assert.Equal(t, tt.nonPrefixed, p.NonPrefixedServers)
		})
	}
	var nilConfig *Config
	assert.Equal(t, mcpname.CodexE6Params(), nilConfig.Params())
}

func TestConfigErrorHidesValues(t *testing.T) {
	tests := []struct {
		name string
		toml string
	}{
		{"syntax", "[mcp_servers.a]\nenv = { TOKEN = \"sk-secret-value\" \n"},
		{"type", "[mcp_servers.a]\nenabled = \"sk-secret-value\"\n"},
		{"args type", "[mcp_servers.a]\nargs = \"sk-secret-value\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("/h/.codex/config.toml", []byte(tt.toml))
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrConfig)
			var ce *ConfigError
			require.True(t, errors.As(err, &ce))
			assert.Equal(t, "/h/.codex/config.toml", ce.Path)
			assert.NotContains(t, err.Error(), "sk-secret-value")
		})
	}
}

// TestConfigErrorPosition: the position in a syntax error is that of the offending byte. The
// TOML decoder's own Line/Col are off when the error is at a line end (it reports the next
// line) or after an unterminated array (the previous line's length as the column), and count
// bytes, not characters.
func TestConfigErrorPosition(t *testing.T) {
	tests := []struct {
		name, toml, want string
	}{
		{"table name cut at the line end", "[mcp_servers.lit\n", "line 1, column 17: "},
		{"array left open", "[mcp_servers.lit]\nargs = [\"a\" \nbearer = \"x\"\n", "line 3, column 1: "},
		{"value missing", "a = 1\nb = = 2\n", "line 2, column 5: "},
		{"multi-byte text before", "# \u00e9\u00e9\u00e9\nx = = 1\n", "line 2, column 5: "},
		{"column in characters", "a = \"\u00e9\u00e9\" b\n", "line 1, column 9: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("/h/config.toml", []byte(tt.toml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "/h/config.toml: invalid Codex config.toml: "+tt.want)
		})
	}
}

// TestConfigNonTableServers: mcp_servers that is not a table is an invalid
// config naming the key and line, not a config without servers (the TOML decoder leaves the
// map empty without an error).
func TestConfigNonTableServers(t *testing.T) {
	for _, tt := range []struct{ toml, want string }{
		{"model = \"m\"\nmcp_servers = \"sk-secret-value\"\n", "line 2: mcp_servers must be a table of servers, not a string"},
		{"mcp_servers = [\"sk-secret-value\"]\n", "line 1: mcp_servers must be a table of servers, not an array"},
	} {
		_, err := ParseConfig("/h/config.toml", []byte(tt.toml))
		require.Error(t, err, tt.toml)
		assert.ErrorIs(t, err, ErrConfig)
		assert.Equal(t, "/h/config.toml: invalid Codex config.toml: "+tt.want, err.Error())
		assert.NotContains(t, err.Error(), "sk-secret-value")
	}
}

func TestHome(t *testing.T) {
	tests := []struct {
		name, env, want string
	}{
		{"default", "", "/home/me/.codex"},
		{"CODEX_HOME", "/srv/codex", "/srv/codex"},
		{"tilde", "~/alt", "/home/me/alt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "CODEX_HOME" {
					return tt.env
				}
				return ""
			}
			assert.Equal(t, tt.want, Home(getenv, "/home/me"))
		})
	}
	assert.Equal(t, []string{"/c/sessions", "/c/archived_sessions"}, SessionDirs("/c"))
}

func TestHomeOf(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "tickets", "4711", "user-codex")
	day := filepath.Join(home, "sessions", "2026", "11", "30")
	require.NoError(t, os.MkdirAll(day, 0o755))
	rollout := filepath.Join(day, "rollout-2026-11-30T18-55-07-x.jsonl")
	require.NoError(t, os.WriteFile(rollout, []byte("{}\n"), 0o600))
	withConfig := filepath.Join(base, "only-config")
	require.NoError(t, os.MkdirAll(withConfig, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(withConfig, ConfigName), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(withConfig, "thread_history_1.sqlite"), nil, 0o600))
	plain := filepath.Join(base, "plain")
	require.NoError(t, os.MkdirAll(plain, 0o755))
	loose := filepath.Join(plain, "copy.jsonl")
	require.NoError(t, os.WriteFile(loose, []byte("{}\n"), 0o600))

	tests := []struct{ name, path, want string }{
		{"the home (sessions/ only)", home, home},
		{"a home with config.toml only", withConfig, withConfig},
		{"a database in the home", filepath.Join(withConfig, "thread_history_1.sqlite"), withConfig},
		{"its sessions dir", filepath.Join(home, "sessions"), home},
		{"a day dir", day, home},
		{"a rollout", rollout, home},
		{"a directory in no home", plain, ""},
		{"a file in no home", loose, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, HomeOf(tt.path))
		})
	}
	assert.Equal(t, []string{filepath.Join(withConfig, "thread_history_1.sqlite")}, HistoryDBs(withConfig))
	assert.Empty(t, HistoryDBs(home))
}
