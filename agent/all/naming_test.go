package all

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/claude"
	"github.com/sessionfix/sessionfix/agent/cline"
	"github.com/sessionfix/sessionfix/agent/codex"
	"github.com/sessionfix/sessionfix/agent/copilot"
	"github.com/sessionfix/sessionfix/agent/gemini"
	"github.com/sessionfix/sessionfix/agent/kilo"
	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// TestNamersComeFromTheList: each room's naming rule, classes and text sites are reached
// through the list, in list order.
func TestNamersComeFromTheList(t *testing.T) {
	var ids []mcpname.Class
	for _, ci := range Classes() {
		ids = append(ids, ci.Class)
	}
	assert.Equal(t, []mcpname.Class{gemini.ClassRenamed, gemini.ClassShared, gemini.ClassUnattributed, codex.ClassCodexRejected, codex.ClassCodexUnattributed, codex.ClassCodexOverLong,
		claude.ClassClaudeRenamed, claude.ClassClaudeShared, claude.ClassClaudeMayShare, claude.ClassClaudeUnattributed, claude.ClassClaudeOverLong,
		kilo.ClassKiloRenamed, kilo.ClassKiloOverLong, kilo.ClassKiloGone, kilo.ClassKiloShared,
		copilot.ClassCopilotRenamed, copilot.ClassCopilotNoTool, copilot.ClassCopilotUnattributed, copilot.ClassCopilotShadowed,
		cline.ClassCline2Renamed, cline.ClassCline2Rejected, cline.ClassCline2OldUID, cline.ClassCline3Renamed, cline.ClassCline3NoTool}, ids)
	ci, ok := ClassOf(claude.ClassClaudeShared)
	assert.True(t, ok)
	assert.Contains(t, ci.Action, "--allow-shared")
	_, ok = ClassOf(mcpname.ClassLegacyDotted)
	assert.False(t, ok, "mcpname's own classes are not a room's")

	assert.True(t, TextSite(claude.ClaudeSiteSelect))
	assert.True(t, TextSite(claude.ClaudeSiteDeferred))
	assert.False(t, TextSite(store.SiteCall))

	for _, a := range []store.AgentID{gemini.ID, qwen.ID, codex.ID, claude.ID, kilo.ID, cline.ID} {
		assert.NotNil(t, Lookup(a).Core().Namer, "%s has its own naming rule", a)
	}
	assert.Nil(t, Lookup("opencode").Core().Namer, "opencode follows naming.ProviderSafe")
	var _ naming.Namer = naming.ProviderSafe{}
}

// TestOwnsSettings: a Claude Code config directory (named .claude, or with sessions directly
// under projects/<dir>/) owns its settings.json; a Qwen Code runtime directory does not.
func TestOwnsSettings(t *testing.T) {
	dir := t.TempDir()
	dot := filepath.Join(dir, ".claude")
	cp := filepath.Join(dir, "copy")
	qw := filepath.Join(dir, "qwen")
	require.NoError(t, os.MkdirAll(dot, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(cp, "projects", "-src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cp, "projects", "-src", "a.jsonl"), nil, 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(qw, "projects", "-src", "chats"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(qw, "projects", "-src", "chats", "a.jsonl"), nil, 0o600))
	assert.True(t, OwnsSettings(dot))
	assert.True(t, OwnsSettings(cp))
	assert.False(t, OwnsSettings(qw))
}
