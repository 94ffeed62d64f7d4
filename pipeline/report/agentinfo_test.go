package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/claude"
	"github.com/sessionfix/sessionfix/agent/codex"
)

// keys are the top-level member names of a JSON object, in order.
func keys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytesReader(b))
	_, err := dec.Token()
	require.NoError(t, err)
	var out []string
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		out = append(out, k.(string))
		var raw json.RawMessage
		require.NoError(t, dec.Decode(&raw))
	}
	return out
}

// TestAgentMembers: the agents' rows are written under their IDs right after "identities"
// (scan) and "problems" (fix's tail), in list order, with the rows' own JSON and no HTML
// escaping; no rows, no member (docs/md's "codex" and "claude").
func TestAgentMembers(t *testing.T) {
	info := AgentInfo{
		{ID: codex.ID, Rows: []agent.Info{&codex.Info{Home: "/h/<x>", Rollouts: 2, Config: "/h/config.toml", ConfigFrom: "~/.codex", Inventory: []string{}, History: []string{}}}},
		{ID: claude.ID, Rows: []agent.Info{&claude.Info{Home: "/c", Sessions: 1, Version: "2.1.332", KeySources: []string{}, Inventory: []string{}}}},
	}
	b, err := compactJSON(ScanReport{Agents: info}) // as reports.WriteJSON: no HTML escaping
	require.NoError(t, err)
	k := keys(t, b)
	i := indexOf(k, "identities")
	require.GreaterOrEqual(t, i, 0, string(b))
	assert.Equal(t, []string{"identities", "codex", "claude", "redispatch"}, k[i:], string(b))
	assert.Contains(t, string(b), `"codex":[{"home":"/h/<x>","rollouts":2,"config":"/h/config.toml","config_from":"~/.codex","inventory":[],"history":[],"history_tools":0}]`)
	assert.Contains(t, string(b), `"claude":[{"home":"/c","sessions":1,"version":"2.1.332","config":"","key_sources":[],"keys":0,"inventory":[],"allow_shared":false}]`)

	b, err = compactJSON(ScanReport{})
	require.NoError(t, err)
	assert.NotContains(t, keys(t, b), "codex")

	b, err = compactJSON(FixTail{Agents: info[1:], RedispatchNote: "n"})
	require.NoError(t, err)
	assert.Equal(t, []string{"summary", "totals", "skipped", "problems", "claude", "redispatch_note"}, keys(t, b), string(b))
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
