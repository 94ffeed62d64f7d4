package settings

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type srcRow struct {
	scope Scope
	path  string
	opt   bool
}

func srcRows(s []Source) []srcRow {
	out := make([]srcRow, len(s))
	for i, x := range s {
		out[i] = srcRow{x.Scope, x.Path, x.Optional}
	}
	return out
}

func TestDiscover(t *testing.T) {
	tests := []struct {
		name string
		opts DiscoverOptions
		want []srcRow
	}{
		{
			name: "linux defaults without a project",
			opts: DiscoverOptions{Home: "/home/u", GOOS: "linux"},
			want: []srcRow{
				{ScopeSystemDefaults, "/etc/qwen-code/system-defaults.json", true},
				{ScopeUser, "/home/u/.qwen/settings.json", true},
				{ScopeSystem, "/etc/qwen-code/settings.json", true},
			},
		},
		{
			name: "darwin with a project",
			opts: DiscoverOptions{Home: "/Users/u", GOOS: "darwin", ProjectDir: "/Users/u/src/app"},
			want: []srcRow{
				{ScopeSystemDefaults, "/Library/Application Support/QwenCode/system-defaults.json", true},
				{ScopeUser, "/Users/u/.qwen/settings.json", true},
				{ScopeWorkspace, "/Users/u/src/app/.qwen/settings.json", true},
				{ScopeSystem, "/Library/Application Support/QwenCode/settings.json", true},
			},
		},
		{
			name: "windows system paths",
			opts: DiscoverOptions{Home: "/home/u", GOOS: "windows"},
			want: []srcRow{
				{ScopeSystemDefaults, `C:\ProgramData\qwen-code\system-defaults.json`, true},
				{ScopeUser, "/home/u/.qwen/settings.json", true},
				{ScopeSystem, `C:\ProgramData\qwen-code\settings.json`, true},
			},
		},
		{
			name: "environment overrides",
			opts: DiscoverOptions{Home: "/home/u", GOOS: "linux", Cwd: "/work", Env: Env{
				"QWEN_HOME":                      "cfg/qwen",
				"QWEN_CODE_SYSTEM_SETTINGS_PATH": "/opt/qwen/sys.json",
			}},
			want: []srcRow{
				{ScopeSystemDefaults, "/opt/qwen/system-defaults.json", true},
				{ScopeUser, "/work/cfg/qwen/settings.json", true},
				{ScopeSystem, "/opt/qwen/sys.json", true},
			},
		},
		{
			name: "explicit defaults path, tilde QWEN_HOME, empty overrides ignored",
			opts: DiscoverOptions{Home: "/home/u", GOOS: "linux", Env: Env{
				"QWEN_HOME":                      "~/alt",
				"QWEN_CODE_SYSTEM_DEFAULTS_PATH": "/d.json",
				"QWEN_CODE_SYSTEM_SETTINGS_PATH": "",
			}},
			want: []srcRow{
				{ScopeSystemDefaults, "/d.json", true},
				{ScopeUser, "/home/u/alt/settings.json", true},
				{ScopeSystem, "/etc/qwen-code/settings.json", true},
			},
		},
		{
			name: "no home directory",
			opts: DiscoverOptions{TempDir: "/tmp", GOOS: "linux"},
			want: []srcRow{
				{ScopeSystemDefaults, "/etc/qwen-code/system-defaults.json", true},
				{ScopeUser, "/tmp/.qwen/settings.json", true},
				{ScopeSystem, "/etc/qwen-code/settings.json", true},
			},
		},
		{
			name: "explicit files sit between workspace and system",
			opts: DiscoverOptions{Home: "/home/u", GOOS: "linux", ProjectDir: "/p", Explicit: []Source{
				{Path: "/x/a.json", Optional: true},
				{Path: "/x/b.json", Scope: ScopeUser},
			}},
			want: []srcRow{
				{ScopeSystemDefaults, "/etc/qwen-code/system-defaults.json", true},
				{ScopeUser, "/home/u/.qwen/settings.json", true},
				{ScopeUser, "/x/b.json", false},
				{ScopeWorkspace, "/p/.qwen/settings.json", true},
				{ScopeExplicit, "/x/a.json", false},
				{ScopeSystem, "/etc/qwen-code/settings.json", true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, srcRows(Discover(tt.opts)))
		})
	}
}

func TestDiscoverSkipsWorkspaceThatIsTheUserScope(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".qwen"), 0o755))
	link := filepath.Join(t.TempDir(), "home-link")
	require.NoError(t, os.Symlink(home, link))

	tests := []struct {
		name    string
		opts    DiscoverOptions
		wantsWS bool
	}{
		{"project is the home directory", DiscoverOptions{Home: home, ProjectDir: home}, false},
		{"project is a symlink to home", DiscoverOptions{Home: home, ProjectDir: link}, false},
		{"QWEN_HOME is the project's .qwen", DiscoverOptions{Home: "/elsewhere", ProjectDir: home,
			Env: Env{"QWEN_HOME": filepath.Join(home, ".qwen")}}, false},
		{"another project", DiscoverOptions{Home: home, ProjectDir: filepath.Join(home, "src")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.GOOS = "linux"
			var scopes []Scope
			for _, s := range Discover(tt.opts) {
				scopes = append(scopes, s.Scope)
			}
			assert.Equal(t, tt.wantsWS, contains(scopes, ScopeWorkspace), "scopes %v", scopes)
		})
	}
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func TestAgentDirs(t *testing.T) {
	assert.Equal(t, []string{"/p/.qwen/agents", "/home/u/.qwen/agents"},
		AgentDirs(DiscoverOptions{Home: "/home/u", ProjectDir: "/p"}))
	assert.Equal(t, []string{"/q/agents"},
		AgentDirs(DiscoverOptions{Home: "/home/u", Env: Env{"QWEN_HOME": "/q"}}))
	assert.Equal(t, []string{"/home/u/.qwen/agents"},
		AgentDirs(DiscoverOptions{Home: "/home/u", ProjectDir: "/home/u"}), "home is no project")
}

func TestEnvFromList(t *testing.T) {
	env := mcpconfig.EnvFromList([]string{"A=1", "B=x=y", "NOEQ", "=bad", "A=2", "E="})
	assert.Equal(t, Env{"A": "2", "B": "x=y", "E": ""}, env)
	assert.Equal(t, []string{"A=2", "B=x=y", "E="}, env.List())
}
