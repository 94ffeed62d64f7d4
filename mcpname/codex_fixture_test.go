package mcpname

import (
	"bufio"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const codexFixtures = "../fixtures/codex-real/"

// codexFixtureTools is the raw tool set of the codex-real runs (fixtures/README.md): the fake
// MCP servers "lit" and "foo-bar" as configured in config.toml.
var codexFixtureTools = []CodexTool{
	{"lit", "literature.search_pubmed"},
	{"lit", "literature_search_pubmed"},
	{"lit", "get+data"},
	{"lit", "get_data_for_a_specific_location_and_date_range_extended"},
	{"lit", "搜索文献"},
	{"lit", "ok_tool"},
	{"foo-bar", "get_data"},
	{"foo-bar", "deploy.prod"},
}

// codexCall is one response_item function_call of a rollout.
type codexCall struct {
	CallID    string `json:"call_id"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// codexRollout is what the fixture tests need from a rollout JSONL file.
type codexRollout struct {
	CLIVersion string
	Calls      []codexCall
	// Raw maps call_id to the raw identity recorded by the rollout itself: event_msg
	// mcp_tool_call_end.invocation.{server,tool}, or event_msg item_completed whose item is an
	// McpToolCall {id, server, tool} (what Codex 0.169.0 writes).
	Raw map[string]CodexTool
}

func readCodexRollout(t testing.TB, path string) codexRollout {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := codexRollout{Raw: map[string]CodexTool{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for sc.Scan() {
		var line struct {
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		var p struct {
			Type       string `json:"type"`
			CLIVersion string `json:"cli_version"`
			CallID     string `json:"call_id"`
			Invocation *struct {
				Server string `json:"server"`
				Tool   string `json:"tool"`
			} `json:"invocation"`
			Item *struct {
				Type   string `json:"type"`
				ID     string `json:"id"`
				Server string `json:"server"`
				Tool   string `json:"tool"`
			} `json:"item"`
		}
		require.NoError(t, json.Unmarshal(line.Payload, &p))
		switch {
		case line.Type == "session_meta":
			r.CLIVersion = p.CLIVersion
		case line.Type == "response_item" && p.Type == "function_call":
			var c codexCall
			require.NoError(t, json.Unmarshal(line.Payload, &c))
			r.Calls = append(r.Calls, c)
		case line.Type == "event_msg" && p.Type == "mcp_tool_call_end" && p.Invocation != nil:
			r.Raw[p.CallID] = CodexTool{p.Invocation.Server, p.Invocation.Tool}
		case line.Type == "event_msg" && p.Type == "item_completed" && p.Item != nil && p.Item.Type == "McpToolCall":
			r.Raw[p.Item.ID] = CodexTool{p.Item.Server, p.Item.Tool}
		}
	}
	require.NoError(t, sc.Err())
	return r
}

// readThreadItemsMcpCalls reads the mcpToolCall rows of a thread_history_1 sqlite3 .dump:
// call id (item_id) → raw identity from item_json.
func readThreadItemsMcpCalls(t testing.TB, path string) map[string]CodexTool {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]CodexTool{}
	for line := range strings.SplitSeq(string(data), "\n") {
		if !strings.HasPrefix(line, "INSERT INTO thread_items VALUES(") || !strings.Contains(line, "'mcpToolCall'") {
			continue
		}
		start := strings.Index(line, ",'{") + 2
		end := strings.LastIndex(line, "}','mcpToolCall'") + 1
		require.Greater(t, end, start, "item_json in %q", line)
		var item struct {
			Type   string `json:"type"`
			ID     string `json:"id"`
			Server string `json:"server"`
			Tool   string `json:"tool"`
		}
		require.NoError(t, json.Unmarshal([]byte(strings.ReplaceAll(line[start:end], "''", "'")), &item))
		require.Equal(t, "mcpToolCall", item.Type)
		out[item.ID] = CodexTool{item.Server, item.Tool}
	}
	return out
}

func sortedTools(m map[string]CodexTool) []CodexTool {
	set := map[CodexTool]bool{}
	for _, tool := range m {
		set[tool] = true
	}
	out := make([]CodexTool, 0, len(set))
	for tool := range set {
		out = append(out, tool)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].Tool < out[j].Tool
	})
	return out
}

// TestCodexFixtureRawTools checks the raw tool list against both raw sources of the 0.169.0
// run: the rollout's McpToolCall records and the thread_items mcpToolCall rows.
func TestCodexFixtureRawTools(t *testing.T) {
	r := readCodexRollout(t, codexFixtures+"rollout-codex-0.169.0.jsonl")
	rows := readThreadItemsMcpCalls(t, codexFixtures+"thread_history_1.sql")
	assert.Equal(t, "0.169.0", r.CLIVersion)
	assert.Equal(t, rows, r.Raw, "rollout records and thread_items rows agree call by call")
	assert.ElementsMatch(t, codexFixtureTools, sortedTools(r.Raw))
}

// TestCodexFixtureE6Allocation: the E6 allocation of the raw tool set reproduces every
// (namespace, name) pair that Codex 0.169.0 recorded in its function_call items.
func TestCodexFixtureE6Allocation(t *testing.T) {
	cfg, err := os.ReadFile(codexFixtures + "config.toml")
	require.NoError(t, err)
	require.NotContains(t, string(cfg), "non_prefixed_mcp_tool", "the run used the default prefixing")

	r := readCodexRollout(t, codexFixtures+"rollout-codex-0.169.0.jsonl")
	require.Len(t, r.Calls, len(codexFixtureTools), "one call per tool")
	p := CodexE6Params()
	got := CodexAllocate(codexFixtureTools, p)
	for _, c := range r.Calls {
		t.Run(c.CallID, func(t *testing.T) {
			raw, ok := r.Raw[c.CallID]
			require.True(t, ok, "the rollout records the raw identity of %s", c.CallID)
			assert.Equal(t, CodexName{c.Namespace, c.Name}, got[raw], "%v", raw)
			assert.Equal(t, CodexFormE5, CodexCallFormOf(c.Namespace))
			stored := CodexStoredName(c.Namespace, c.Name)
			assert.Equal(t, p.ModelName(got[raw]), stored)
			assert.True(t, CodexNameAccepted(stored, ResponsesNameMax), stored)
		})
	}
	// The documented headline values (fixtures/README.md).
	assert.Equal(t, CodexName{"mcp__lit", "literature_search_pubmed_977c8bf14fb3"}, got[CodexTool{"lit", "literature.search_pubmed"}])
	assert.Equal(t, CodexName{"mcp__lit", "literature_search_pubmed_fb385f558dd5"}, got[CodexTool{"lit", "literature_search_pubmed"}])
	assert.Equal(t, CodexName{"mcp__lit", "____"}, got[CodexTool{"lit", "搜索文献"}])
	assert.Equal(t, CodexName{"mcp__foo_bar", "deploy_prod"}, got[CodexTool{"foo-bar", "deploy.prod"}])
	// The run tells E6 from E5: under MAX 64 the 56-byte tool (8+2+56 = 66) would have been cut
	// and hashed; 0.169.0 kept it whole, as MAX 128 does. Every other name is the same in E5.
	e5 := CodexAllocate(codexFixtureTools, CodexE5Params())
	long := CodexTool{"lit", "get_data_for_a_specific_location_and_date_range_extended"}
	assert.Equal(t, CodexName{"mcp__lit", "get_data_for_a_specific_location_and_date_c736bbae3bbf"}, e5[long])
	assert.Equal(t, CodexName{"mcp__lit", long.Tool}, got[long])
	for tool, n := range got {
		if tool != long {
			assert.Equal(t, n, e5[tool], "%v", tool)
		}
	}
}

// TestCodexFixtureE2FlatNames: Codex 0.50.0 (era E2) stored flat names with no namespace and no
// raw records; each equals CodexFlatE2 of exactly one raw tool of the same servers.
func TestCodexFixtureE2FlatNames(t *testing.T) {
	r := readCodexRollout(t, codexFixtures+"rollout-codex-0.50.0.jsonl")
	assert.Equal(t, "0.50.0", r.CLIVersion)
	assert.Empty(t, r.Raw, "0.50.0 wrote no raw invocation records")
	require.Len(t, r.Calls, len(codexFixtureTools))

	byName := map[string]CodexTool{}
	kept, err := CodexQualifyFlat(CodexE2, codexFixtureTools)
	require.NoError(t, err)
	for _, k := range kept {
		require.Empty(t, k.Dropped, "%v", k.Tool)
		byName[k.Name] = k.Tool
	}
	tests := []struct {
		name     string
		tool     CodexTool
		accepted bool
	}{
		{"mcp__foo-bar__deploy.prod", CodexTool{"foo-bar", "deploy.prod"}, false},
		{"mcp__foo-bar__get_data", CodexTool{"foo-bar", "get_data"}, true},
		{"mcp__lit__get+data", CodexTool{"lit", "get+data"}, false},
		{"mcp__lit__get_data_for_ac352d8d5b3162dc1c56186bee052bd46cca7a385",
			CodexTool{"lit", "get_data_for_a_specific_location_and_date_range_extended"}, true},
		{"mcp__lit__literature.search_pubmed", CodexTool{"lit", "literature.search_pubmed"}, false},
		{"mcp__lit__literature_search_pubmed", CodexTool{"lit", "literature_search_pubmed"}, true},
		{"mcp__lit__ok_tool", CodexTool{"lit", "ok_tool"}, true},
		{"mcp__lit__搜索文献", CodexTool{"lit", "搜索文献"}, false},
	}
	var stored []string
	for _, c := range r.Calls {
		assert.Equal(t, CodexFormFlat, CodexCallFormOf(c.Namespace), c.Name)
		stored = append(stored, c.Name)
	}
	want := make([]string, 0, len(tests))
	for _, tt := range tests {
		want = append(want, tt.name)
		t.Run(tt.name, func(t *testing.T) {
			name, err := CodexFlatE2(tt.tool.Server, tt.tool.Tool)
			require.NoError(t, err)
			assert.Equal(t, tt.name, name)
			assert.Equal(t, tt.tool, byName[tt.name])
			assert.Equal(t, tt.accepted, CodexNameAccepted(CodexStoredName("", tt.name), ResponsesNameMax))
		})
	}
	assert.ElementsMatch(t, want, stored, "every stored call name is an E2 name of one raw tool")
}
