package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/rewrite"
)

// TestPlanOptionsFromRooms: every agent option with a Plan key names a member of
// rewrite.PlanOptions, and a run's options go to the plan file's members and back.
func TestPlanOptionsFromRooms(t *testing.T) {
	opts := planOptions()
	require.NotEmpty(t, opts)
	in := Options{AgentOptions: agent.Values{}}
	for _, o := range opts {
		assert.NotContains(t, rewrite.PlanGenericMembers(), o.Plan, "option %s: plan member %q is a generic member", o.Name, o.Plan)
		assert.Contains(t, rewrite.PlanGenericMembers(), o.PlanAfter, "option %s: PlanAfter %q is no generic member", o.Name, o.PlanAfter)
		switch {
		case o.Bool:
			in.AgentOptions[o.Name] = []string{"true"}
		case o.Repeatable:
			in.AgentOptions[o.Name] = []string{"/a/" + o.Name, "/b/" + o.Name}
		default:
			in.AgentOptions[o.Name] = []string{"/x/" + o.Name}
		}
	}
	rec := RecordedOptions(in)
	b, err := json.Marshal(rec)
	require.NoError(t, err)
	assert.Equal(t, `{"codex_config":"/x/codex-config","mcp_config":["/a/mcp-config","/b/mcp-config"],"allow_shared":true,"kilo_config":["/a/kilo-config","/b/kilo-config"],"busy_timeout":"0s"}`, string(b))
	back, err := OptionsOfPlan(rec, Options{})
	require.NoError(t, err)
	assert.Equal(t, in.AgentOptions, back.AgentOptions)
	// An old plan file's members load the same way.
	var old rewrite.PlanOptions
	require.NoError(t, json.Unmarshal([]byte(`{"codex_config":"/c/config.toml","allow_shared":true}`), &old))
	require.Nil(t, old.CheckAgents(planMembers()))
	back, err = OptionsOfPlan(old, Options{})
	require.NoError(t, err)
	assert.Equal(t, agent.Values{"codex-config": {"/c/config.toml"}, "allow-shared": {"true"}}, back.AgentOptions)
}

// TestPlanFileOfStartBinary: plan files the start binary of this layout (c2c7f0a, whose
// PlanOptions had typed CodexConfig/MCPConfig/AllowShared fields) wrote with every agent
// option, in /home/demo: they load (ReadPlanFile checks the checksum and every member), give
// the run options they were made with, and marshal back to the very same bytes (the agent
// members at their old places, the & of a path not escaped, the same checksum).
func TestPlanFileOfStartBinary(t *testing.T) {
	for _, tc := range []struct {
		file string
		want agent.Values
	}{
		{"testdata/plan-c2c7f0a-claude.json", agent.Values{"codex-config": {"/home/demo/codex/config.toml"},
			"mcp-config": {"/home/demo/mcp&a.json", "/home/demo/mcp2.json"}, "allow-shared": {"true"}}},
		{"testdata/plan-c2c7f0a-codex.json", agent.Values{"codex-config": {"/home/demo/codex/config.toml"}}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			want, err := os.ReadFile(tc.file)
			require.NoError(t, err)
			pf, err := ReadPlanFile(tc.file)
			require.NoError(t, err)
			po, err := OptionsOfPlan(pf.Options, Options{})
			require.NoError(t, err)
			assert.Equal(t, tc.want, po.AgentOptions)
			assert.Equal(t, "/home/demo/tools.json", po.Inventory)
			got, err := rewrite.MarshalPlanFile(pf)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), "a plan read and written again keeps its bytes")
			// A run with those options records the same members (what --plan-out writes now).
			rec := RecordedOptions(po)
			rec.BusyTimeout = pf.Options.BusyTimeout
			pf.Options = rec
			got, err = rewrite.MarshalPlanFile(pf)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), "the options a run records are written as the start binary wrote them")
		})
	}
}

// TestPlanOptionsUntrusted: a plan's options members are untrusted: a member given twice, of
// the wrong JSON type, unknown, or an agent member of the wrong kind or with a relative path is
// refused, naming the file and the member.
func TestPlanOptionsUntrusted(t *testing.T) {
	good, err := os.ReadFile("testdata/plan-c2c7f0a-claude.json")
	require.NoError(t, err)
	dir := t.TempDir()
	for _, tc := range []struct{ name, from, to, msg string }{
		{"twice", `"keep_truncated": true,`, `"keep_truncated": true, "keep_truncated": false,`, "options.keep_truncated: given twice"},
		{"agent twice", `"allow_shared": true,`, `"allow_shared": true, "allow_shared": true,`, "options.allow_shared: given twice"},
		{"generic type", `"keep_truncated": true,`, `"keep_truncated": "yes",`, "options.keep_truncated: not a boolean: a string"},
		{"inventory type", `"inventory": "/home/demo/tools.json"`, `"inventory": ["/home/demo/tools.json"]`, "options.inventory: not a string: an array"},
		{"unknown", `"keep_truncated": true,`, `"keep_truncated": true, "run": "rm -rf /",`, `options.run: unknown member`},
		{"bool as string", `"allow_shared": true`, `"allow_shared": "true"`, "options.allow_shared: not a boolean: a string"},
		{"list as string", `"mcp_config": [`, `"mcp_config": "/x", "y": [`, "options.mcp_config: not a list of strings: a string"},
		{"string as list", `"codex_config": "/home/demo/codex/config.toml"`, `"codex_config": ["/home/demo/codex/config.toml"]`, "options.codex_config: not a string: a list of strings"},
		{"number", `"allow_shared": true`, `"allow_shared": 1`, "options.allow_shared: not a boolean, a string or a list of strings: a number"},
		{"list of numbers", `"/home/demo/mcp2.json"`, `2`, "options.mcp_config: not a list of strings: an array"},
		{"relative file", `"codex_config": "/home/demo/codex/config.toml"`, `"codex_config": "codex/config.toml"`, `options.codex_config: not an absolute path: "codex/config.toml"`},
		{"relative list file", `"/home/demo/mcp2.json"`, `"../mcp2.json"`, `options.mcp_config[1]: not an absolute path`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.True(t, bytes.Contains(good, []byte(tc.from)), tc.from)
			doc := bytes.Replace(good, []byte(tc.from), []byte(tc.to), 1)
			p := filepath.Join(dir, tc.name+".json")
			require.NoError(t, os.WriteFile(p, reseal(t, doc), 0o600))
			_, err := ReadPlanFile(p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "plan "+p+" refused: "+tc.msg)
			assert.True(t, strings.HasSuffix(err.Error(), "; nothing was changed"), err.Error())
		})
	}
}

// reseal gives doc (a plan file) the checksum of its content, as fix --plan-out seals it.
func reseal(t *testing.T, doc []byte) []byte {
	t.Helper()
	prefix := []byte("{\n  \"checksum\": \"sha256:")
	require.True(t, bytes.HasPrefix(doc, prefix))
	c := bytes.Clone(doc)
	copy(c[len(prefix):], bytes.Repeat([]byte("0"), 64))
	sum := sha256.Sum256(c)
	hex.Encode(c[len(prefix):len(prefix)+64], sum[:])
	return c
}
