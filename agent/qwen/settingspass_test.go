package qwen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionfix/sessionfix/agent"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpconfig"
)

// TestSettingsPass: the room's settings pass (pipeline.ScanSettings runs it) names a directory's
// runtime and project settings files, reads the legacy-spelled rules of each file with their
// place and reason, and reports a file it cannot parse while still reading the others.
func TestSettingsPass(t *testing.T) {
	require.Same(t, Settings, Agent.(agent.SettingsPasser).Settings())
	assert.Equal(t, []string{filepath.Join("d", "settings.json"), filepath.Join("d", ".qwen", "settings.json")}, Settings.Files("d"))

	dir := t.TempDir()
	good := filepath.Join(dir, "settings.json")
	b, err := os.ReadFile("../../fixtures/qwen-settings/settings.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(good, b, 0o600))
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{\n  \"permissions\": [\n"), 0o600))

	res := Settings.Scan([]string{bad, good}, mcpconfig.Env{}, dir, nil)
	assert.Equal(t, []string{good}, res.Files)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, bad, res.Errors[0].Path)
	assert.Contains(t, res.Errors[0].Err.Error(), bad+":3:1:")
	require.Len(t, res.Rules, 5)
	r := res.Rules[0]
	assert.Equal(t, []any{good, 19, 7, "permissions.allow", 0, "mcp__lit__literature.search_pubmed", "not-provider-safe"},
		[]any{r.File, r.Line, r.Column, r.Key, r.Index, r.Rule, r.Reason})
	assert.Empty(t, r.Owners)
	assert.Equal(t, []string{"mcp__lit__literature_search_pubmed_1nv53db"}, r.Registered)
	r = res.Rules[4]
	assert.Equal(t, []any{33, 18, "tools.disabled", "mcp__foo.bar__get_data"}, []any{r.Line, r.Column, r.Key, r.Rule})
}
