package pipeline

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store/agent"
)

// TestPlanOptionsFromRooms: every agent option with a Plan key names a member of
// rewrite.PlanOptions, and a run's options go to the plan file's members and back.
func TestPlanOptionsFromRooms(t *testing.T) {
	opts := planOptions()
	require.NotEmpty(t, opts)
	in := Options{AgentOptions: agent.Values{}}
	for _, o := range opts {
		_, ok := rewrite.PlanOptions{}.AgentValues(o.Plan)
		assert.True(t, ok, "option %s: plan member %q is no member of rewrite.PlanOptions", o.Name, o.Plan)
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
	assert.Equal(t, `{"codex_config":"/x/codex-config","mcp_config":["/a/mcp-config","/b/mcp-config"],"allow_shared":true,"busy_timeout":"0s"}`, string(b))
	back, err := OptionsOfPlan(rec, Options{})
	require.NoError(t, err)
	assert.Equal(t, in.AgentOptions, back.AgentOptions)
	// An old plan file's members load the same way.
	var old rewrite.PlanOptions
	require.NoError(t, json.Unmarshal([]byte(`{"codex_config":"/c/config.toml","allow_shared":true}`), &old))
	back, err = OptionsOfPlan(old, Options{})
	require.NoError(t, err)
	assert.Equal(t, agent.Values{"codex-config": {"/c/config.toml"}, "allow-shared": {"true"}}, back.AgentOptions)
}
