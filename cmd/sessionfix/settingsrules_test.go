package main

import (
	"encoding/json"
	"fmt"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/pipeline"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/qwen/settings"
)

// TestScanListsLegacySettingsRules: scan reads settings files among its roots and lists their
// legacy-spelled rules; fix reports them and never rewrites them.
func TestScanListsLegacySettingsRules(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, "../../fixtures/qwen-settings", dir)
	settingsPath := filepath.Join(dir, "settings.json")
	before := snapshotTree(t, dir)
	env := testEnv(t)

	r := runCLI(t, env, "", "scan", "--format", "json", "--inventory", filepath.Join(dir, "inventory.json"), settingsPath)
	require.Equal(t, exitcode.OK, r.code, r.err)
	var rep scanReport
	require.NoError(t, json.Unmarshal([]byte(r.out), &rep))
	require.Len(t, rep.SettingsRules, 7)
	assert.Equal(t, settingsRuleRow{File: settingsPath, Line: 19, Column: 7, Key: "permissions.allow", Index: 0,
		Rule: "mcp__lit__literature.search_pubmed", Reason: "not-provider-safe", Owners: []string{"mcp__lit__literature.search_pubmed"},
		Registered: []string{"mcp__lit__literature_search_pubmed_1nv53db"}}, rep.SettingsRules[0])
	var keys []string
	for _, s := range rep.SettingsRules {
		keys = append(keys, fmt.Sprintf("%s[%d]", s.Key, s.Index))
	}
	assert.Equal(t, []string{"permissions.allow[0]", "permissions.allow[1]", "permissions.allow[2]", "permissions.deny[0]",
		"permissions.deny[1]", "tools.exclude[0]", "tools.disabled[0]"}, keys)

	r = runCLI(t, env, "", "scan", "--inventory", filepath.Join(dir, "inventory.json"), dir)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.out, "settings rules in legacy spellings (reported, never rewritten; see sessionfix audit):")
	assert.Contains(t, r.out, settingsPath+":32:17  tools.exclude[0]")

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", filepath.Join(dir, "..", "state"), settingsPath)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.err, "note: "+settingsPath+": 5 rules in legacy spellings; settings are never rewritten", "without an inventory only the unsafe spellings are known")
	assert.Equal(t, before, snapshotTree(t, dir), "settings untouched")

	require.NoError(t, os.WriteFile(settingsPath, []byte("{\"permissions\": {\"allow\": [\"a\",]}}\n"), 0o644))
	r = runCLI(t, env, "", "scan", settingsPath)
	assert.Equal(t, exitcode.Partial, r.code)
	assert.Contains(t, r.err, settingsPath+":1:31: error: trailing comma", "the path once, with line and column")
}

// TestScanInventoryErrors: scan/fix --inventory read the file with the inventory store
// (comments allowed, errors with file:line:col).
func TestScanInventoryErrors(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte("{\n  // tools\n  \"servers\": {\"lit\": {\"tools\": [\"get+data\"]}}\n}\n"), 0o644))
	sessions := fixtureCopy(t)
	r := runCLI(t, testEnv(t), "", "fix", "--inventory", inv, "--rewrite-lossy", "--format", "json", sessions)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.out, `"new":"mcp__lit__get_data_0kcpus5"`, "a commented inventory resolves the lossy name")

	require.NoError(t, os.WriteFile(inv, []byte("{\"servers\": {\"lit\": {\"tools\": \"get+data\"}}}"), 0o644))
	r = runCLI(t, testEnv(t), "", "scan", "--inventory", inv, sessions)
	assert.Equal(t, exitcode.Error, r.code)
	assert.Contains(t, r.err, inv+":1:31: server \"lit\": \"tools\" is not an array")
}

func TestSplitSettingsRoots(t *testing.T) {
	dir := t.TempDir()
	runtime := filepath.Join(dir, "dot-qwen")
	project := filepath.Join(dir, "app")
	other := filepath.Join(dir, "other")
	for _, p := range []string{filepath.Join(runtime, "settings.json"), filepath.Join(project, ".qwen", "settings.json"),
		filepath.Join(other, "my-settings.json")} {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("{}"), 0o644))
	}
	explicit := filepath.Join(project, ".qwen", "settings.json")
	files, roots, walked := pipeline.SplitSettingsRoots([]string{runtime, project, explicit, other, filepath.Join(other, "my-settings.json"), filepath.Join(dir, "missing")})
	assert.Equal(t, []string{filepath.Join(runtime, "settings.json"), explicit}, files)
	assert.Equal(t, []string{runtime, project, other, filepath.Join(other, "my-settings.json"), filepath.Join(dir, "missing")}, roots,
		"an explicit settings.json is not handed to store discovery; other paths are")
	assert.Equal(t, 2, walked)
}

func TestSettingsScope(t *testing.T) {
	home := t.TempDir()
	global := filepath.Join(home, ".qwen")
	tests := []struct {
		name, path string
		want       string
	}{
		{"user settings", filepath.Join(home, ".qwen", "settings.json"), "user"},
		{"QWEN_HOME settings", filepath.Join(home, "custom", "settings.json"), "explicit"},
		{"project settings", filepath.Join(home, "src", "app", ".qwen", "settings.json"), "workspace"},
		{"any other file", filepath.Join(home, "settings.json"), "explicit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, string(settings.ScopeOf(tt.path, home, global)))
		})
	}
	assert.Equal(t, "user", string(settings.ScopeOf(filepath.Join(home, "custom", "settings.json"), home, filepath.Join(home, "custom"))))
}
