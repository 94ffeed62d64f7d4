package all

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/codex"
	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/store"
)

func TestDetectAsCodex(t *testing.T) {
	dir := t.TempDir()
	both := filepath.Join(dir, "rollout-2026-01-01T00-00-00-b.jsonl")
	require.NoError(t, os.WriteFile(both, []byte("{}\n"), 0o600))
	const meta = `{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}` + "\n"
	const qwenLine = `{"uuid":"u","sessionId":"s","type":"user"}` + "\n"
	tests := []struct {
		name        string
		agent       store.AgentID
		path        string
		head        string
		kind        store.Kind // "" = not a store
		unsupported string     // substring of Detection.Unsupported
	}{
		{"auto: rollout by name", "", "/c/sessions/2026/01/01/rollout-2026-01-01T00-00-00-a.jsonl", "", codex.KindRollout, ""},
		{"auto: rollout by content", "", "/tmp/copy.jsonl", meta, codex.KindRollout, ""},
		{"auto: qwen by content", "", "/tmp/copy.jsonl", qwenLine, qwen.KindSession, ""},
		{"auto: BOM before session_meta", "", "/tmp/copy.jsonl", "\xEF\xBB\xBF" + meta, codex.KindRollout, ""},
		{"codex: any jsonl is a rollout", codex.ID, "/tmp/odd.jsonl", `{"x":1}`, codex.KindRollout, ""},
		{"codex: a qwen-looking file is read as a rollout", codex.ID, "/tmp/copy.jsonl", qwenLine, codex.KindRollout, ""},
		{"codex: history.jsonl is not a rollout", codex.ID, "/c/history.jsonl", `{"session_id":"s"}`, "", ""},
		{"codex: session_index.jsonl is not a rollout", codex.ID, "/c/session_index.jsonl", `{"id":"s"}`, "", ""},
		{"codex: other files", codex.ID, "/c/config.toml", "[x]", "", ""},
		{"qwen: never a rollout", qwen.ID, "/c/sessions/rollout-a.jsonl", meta, "", ""},
		{"qwen: qwen session", qwen.ID, "/tmp/copy.jsonl", qwenLine, qwen.KindSession, ""},
		{"zst rollout alone", "", "/c/sessions/rollout-2026-01-01T00-00-00-a.jsonl.zst", "\x28\xb5\x2f\xfd", "", "zstd-compressed Codex rollout: reported, not parsed"},
		{"zst rollout next to its plain file", "", both + ".zst", "\x28\xb5\x2f\xfd", "", "next to its plain .jsonl"},
		{"codex: any jsonl.zst", codex.ID, "/c/archived_sessions/x.jsonl.zst", "", "", "zstd-compressed Codex rollout"},
		{"other zst json", "", "/q/usage_record.jsonl.zst", "", "", "zstd-compressed store"},
		{"zst that is no store", "", "/q/blob.zst", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DetectAs(tt.agent, tt.path, []byte(tt.head))
			if tt.kind == "" {
				assert.Nil(t, d.Store)
			} else {
				require.NotNil(t, d.Store)
				assert.Equal(t, tt.kind, d.Store.Ref().Kind)
				assert.Equal(t, tt.path, d.Store.Ref().Path)
			}
			if tt.unsupported == "" {
				assert.Empty(t, d.Unsupported)
			} else {
				assert.Contains(t, d.Unsupported, tt.unsupported)
			}
		})
	}
}

func TestOpenCodexRollout(t *testing.T) {
	s, err := Open(store.Ref{Path: "/c/rollout-a.jsonl", Kind: codex.KindRollout})
	require.NoError(t, err)
	assert.Equal(t, codex.KindRollout, s.Ref().Kind)
	_, isWriter := s.(store.Writer)
	_, isRestorer := s.(store.Restorer)
	assert.True(t, isWriter)
	assert.True(t, isRestorer)
}

// TestDetectWarnsOnWrongAgent: a forced --agent that goes against a file's content is said
// (issue 8 item 11), never a silent all-clear.
func TestDetectWarnsOnWrongAgent(t *testing.T) {
	const meta = `{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}`
	const qwenLine = `{"uuid":"u","sessionId":"s","type":"user"}`
	tests := []struct {
		name       string
		agent      store.AgentID
		path, head string
		read       bool
		warning    string // substring; "" = none
	}{
		{"codex on a qwen session", codex.ID, "/q/projects/p/chats/3cea48a5.jsonl", qwenLine, true, "looks like a qwen store (qwen-session)"},
		{"codex on usage_record", codex.ID, "/q/usage_record.jsonl", `{"tools":{}}`, true, "looks like a qwen store (qwen-usage)"},
		{"codex on an unknown jsonl", codex.ID, "/q/usage/token-usage.jsonl", `{"x":1}`, true, "does not look like one"},
		{"codex on a rollout", codex.ID, "/c/copy.jsonl", meta, true, ""},
		{"codex on a rollout by name", codex.ID, "/c/rollout-2026-01-01T00-00-00-a.jsonl", `{}`, true, ""},
		{"qwen on a rollout", qwen.ID, "/c/sessions/rollout-2026-01-01T00-00-00-a.jsonl", meta, false, "looks like a Codex rollout: not read with --agent qwen"},
		{"qwen on a qwen session", qwen.ID, "/q/chats/a.jsonl", qwenLine, true, ""},
		{"auto never warns", "", "/q/chats/a.jsonl", qwenLine, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DetectAs(tt.agent, tt.path, []byte(tt.head+"\n"))
			assert.Equal(t, tt.read, d.Store != nil)
			if tt.warning == "" {
				assert.Empty(t, d.Warning)
			} else {
				assert.Contains(t, d.Warning, tt.warning)
			}
		})
	}
}

// TestDetectCodexAndQwenFiles: a rollout by name or session_meta first line (also a cut
// 0.169.0 head), Qwen Code by content or a chats/ name, no Codex companion file.
func TestDetectCodexAndQwenFiles(t *testing.T) {
	head0169, err := os.ReadFile("../../fixtures/codex-real/rollout-codex-0.169.0.jsonl")
	require.NoError(t, err)
	head0169 = head0169[:4096] // the session_meta line is longer than a detection head
	require.NotContains(t, string(head0169), "\n")
	tests := []struct {
		name  string
		path  string
		first string
		want  store.Kind
	}{
		{"rollout name", "/s/2026/11/30/rollout-2026-11-30T18-55-07-01a2.jsonl", "", codex.KindRollout},
		{"session_meta first line, other name", "/x/copy.jsonl", `{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}`, codex.KindRollout},
		{"0.169.0 head (ordinal first, cut line)", "/x/copy.jsonl", string(head0169), codex.KindRollout},
		{"spaced", "/x/copy.jsonl", ` { "timestamp" : "t", "type" : "session_meta" , "payload":{}}`, codex.KindRollout},
		{"session_meta only inside the payload", "/x/copy.jsonl", `{"type":"response_item","payload":{"type":"session_meta"}}`, ""},
		{"escaped text", "/x/copy.jsonl", `{"text":"\"type\":\"session_meta\""}`, ""},
		{"qwen record", "/x/copy.jsonl", `{"uuid":"u","sessionId":"s","type":"user"}`, qwen.KindSession},
		{"qwen session name wins", "/p/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl", `{"type":"session_meta"}`, qwen.KindSession},
		{"codex history is no rollout", "/h/.codex/history.jsonl", `{"session_id":"s","ts":1,"text":"x"}`, ""},
		{"compressed name is not plain", "/s/rollout-x.jsonl.zst", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Detect(tt.path, []byte(tt.first+"\n"))
			if tt.want == "" {
				assert.Nil(t, d.Store)
			} else if assert.NotNil(t, d.Store) {
				assert.Equal(t, tt.want, d.Store.Ref().Kind)
			}
		})
	}
	assert.True(t, codex.IsRolloutName("rollout-2026-01-01T00-00-00-x.jsonl.zst"))
	assert.False(t, codex.IsRolloutName("rollout.jsonl"))
	assert.True(t, codex.IsCompanion("session_index.jsonl"))
	assert.True(t, bytes.HasPrefix(head0169, []byte(`{"timestamp"`)))
}
