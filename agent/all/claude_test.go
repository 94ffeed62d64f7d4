package all

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionfix/sessionfix/agent/claude"
	"github.com/sessionfix/sessionfix/agent/codex"
	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/store"
)

// TestClaudeSessionIsNotAQwenSession: a Claude Code session (~/.claude/projects/<dir>/<uuid>.jsonl,
// also subagents/*.jsonl) is named like a Qwen session, but its tool names live elsewhere, so
// reading it as one gave 0 name sites and "nothing to change" for a session holding names a
// provider rejects. It is read as a Claude Code session, without --agent or with --agent claude;
// --agent qwen and --agent codex leave it out with a warning naming Claude Code. Qwen sessions
// are still Qwen sessions. First lines as Claude Code 1.0.51 and 2.1.332 write them.
func TestClaudeSessionIsNotAQwenSession(t *testing.T) {
	claudeLines := map[string]string{
		"user line (1.0.51)":      `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/demo/src/lab","sessionId":"dd19a9ca-e09f-48a6-9120-d559cf0db6fa","version":"1.0.51","type":"user","message":{"role":"user","content":"x"},"uuid":"d159f5ee-f05c-47a4-b59a-ee83e6a92503","timestamp":"2026-12-01T09:14:25.812Z"}`,
		"summary (1.0.51)":        `{"type":"summary","summary":"Kinase inhibitor lookup","leafUuid":"8887e15f-11da-4e3b-8861-84bc4d7da2af"}`,
		"queue-operation (2.1.x)": `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-12-01T09:14:26.175Z","sessionId":"98492a7d-669a-4be6-911b-7e33cdc3d3a4","content":"search"}`,
		"file-history-snapshot":   `{"type":"file-history-snapshot","messageId":"a","snapshot":{"messageId":"a","trackedFileBackups":{},"timestamp":"2026-12-01T09:14:26.175Z"},"isSnapshotUpdate":false}`,
	}
	paths := []string{
		"/home/u/.claude/projects/-home-demo-src-lab/d848c0de-9878-4606-93d3-ab6dda5f2c41.jsonl",
		"/home/u/.claude/projects/-home-demo-src-api/441566c6-e193-4f5e-98cf-abf3928419e9/subagents/agent-a02640152bea9bd4b.jsonl",
	}
	for name, line := range claudeLines {
		for _, p := range paths {
			for _, agent := range []store.AgentID{"", claude.ID} {
				d := DetectAs(agent, p, []byte(line+"\n"))
				if assert.NotNil(t, d.Store, "%s %s --agent %q", name, p, agent) {
					assert.Equal(t, claude.KindSession, d.Store.Ref().Kind, "%s %s --agent %q", name, p, agent)
				}
				assert.Empty(t, d.Warning+d.Unsupported, "%s %s --agent %q", name, p, agent)
			}
			for _, agent := range []store.AgentID{qwen.ID, codex.ID} {
				d := DetectAs(agent, p, []byte(line+"\n"))
				if agent == qwen.ID {
					assert.Nil(t, d.Store, "%s %s --agent %q", name, p, agent)
					assert.Equal(t, "looks like a Claude Code session: not read with --agent qwen (drop --agent or pass --agent claude)", d.Warning, "%s %s", name, p)
				} else {
					// --agent codex reads any *.jsonl as a rollout, and says what it looks like.
					assert.Contains(t, d.Warning, "it looks like a claude store (claude-session)", "%s %s", name, p)
				}
			}
		}
	}
	// --agent claude forces a file that does not look like a Claude Code session, with a warning.
	d := DetectAs(claude.ID, "/tmp/x/notes.jsonl", []byte(`{"a":1}`+"\n"))
	if assert.NotNil(t, d.Store) {
		assert.Equal(t, claude.KindSession, d.Store.Ref().Kind)
	}
	assert.Equal(t, "read as a Claude Code session (--agent claude), but it does not look like one (no Claude Code first line)", d.Warning)
	qwenLine := `{"uuid":"ff0b20a0-2753-4902-80ca-e7a5e22ba79c","parentUuid":null,"sessionId":"3cea48a5-0bbc-425f-a107-6fec809f5dc8","timestamp":"2026-11-30T18:37:17.776Z","type":"user","cwd":"/home/demo/src/lab","version":"0.12.0","message":{"role":"user","parts":[{"text":"x"}]}}` + "\n"
	// A newer Qwen Code record may carry isSidechain (a subagent's), with Gemini parts.
	qwenSide := `{"uuid":"ff0b20a0-2753-4902-80ca-e7a5e22ba79c","parentUuid":null,"sessionId":"3cea48a5-0bbc-425f-a107-6fec809f5dc8","timestamp":"2026-11-30T18:37:17.776Z","type":"user","cwd":"/x","version":"0.15.0","isSidechain":true,"agentId":"a1","message":{"role":"user","parts":[{"text":"x"}]}}` + "\n"
	for _, line := range []string{qwenLine, qwenSide} {
		for _, p := range []string{
			"/home/u/.qwen/projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl",
			"/tickets/4711/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl",
		} {
			d := Detect(p, []byte(line))
			if assert.NotNil(t, d.Store, p) {
				assert.Equal(t, qwen.Session.Kind, d.Store.Ref().Kind, p)
			}
		}
	}
	// A Qwen session in chats/ is one, whatever its first line says.
	d = Detect("/home/u/.qwen/projects/-x/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl", []byte(claudeLines["summary (1.0.51)"]+"\n"))
	if assert.NotNil(t, d.Store) {
		assert.Equal(t, qwen.Session.Kind, d.Store.Ref().Kind)
	}
}
