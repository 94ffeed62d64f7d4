package permission_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/permission/permissiontest"
)

// TestScenarioMatrix replays every row of qwen-reference.md §3.1 (real-CLI verdicts of PR
// #12531) through Decide.
func TestScenarioMatrix(t *testing.T) {
	rows, err := permissiontest.LoadScenarios("testdata/scenarios.json")
	require.NoError(t, err)
	require.Len(t, rows, 58, "every row of the §3.1 table")
	for _, sc := range rows {
		t.Run(sc.ID, func(t *testing.T) {
			require.Equal(t, sc.Registered, permission.NewTool(sc.Target.Server, sc.Target.Tool).Name, "registered name")
			call, err := sc.Call()
			require.NoError(t, err)
			out := permission.Decide(call)
			assert.Equal(t, sc.Expected, out.Verdict, "reason %s, evaluation %+v", out.Reason, out.Evaluation)
		})
	}
}

// TestUnitCases replays every row of qwen-reference.md §3.2 (PermissionManager.evaluate with a
// single rule) through Evaluate.
func TestUnitCases(t *testing.T) {
	rows, err := permissiontest.LoadUnitCases("testdata/unit_cases.json")
	require.NoError(t, err)
	require.Len(t, rows, 71, "every row of the §3.2 table")
	for _, uc := range rows {
		t.Run(uc.Name(), func(t *testing.T) {
			require.Equal(t, uc.Registered, permission.NewTool(uc.Server, uc.Tool).Name, "registered name")
			ev := permission.Evaluate(uc.Rules(), uc.Context(), uc.Registry)
			assert.Equal(t, uc.Expected, ev.Decision)
			if ev.Decision == permission.DecisionDefault {
				assert.Nil(t, ev.Rule)
			} else {
				require.NotNil(t, ev.Rule)
				assert.Equal(t, uc.Rule, ev.Rule.Raw, "deciding rule")
			}
		})
	}
}
