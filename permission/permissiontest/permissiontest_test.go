package permissiontest

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/permission"
)

func writeTable(t testing.TB, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "table.json")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		wantErr error
	}{
		{"missing file", filepath.Join(t.TempDir(), "nope.json"), fs.ErrNotExist},
		{"no rows", writeTable(t, `{"rows": []}`), ErrBadTable},
		{"incomplete row", writeTable(t, `{"rows": [{"id": "X"}]}`), ErrBadTable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadScenarios(tt.path)
			assert.ErrorIs(t, err, tt.wantErr)
		})
	}
	_, err := LoadUnitCases(writeTable(t, `{"rows": [{"n": 1}]}`))
	assert.ErrorIs(t, err, ErrBadTable)
}

func TestScenarioRegistryAndCall(t *testing.T) {
	sc := Scenario{
		ID: "P4", Mode: permission.ModeDefault, Allow: []string{"mcp__foo_bar__*"},
		Servers:  []Server{{Key: "foo.bar", Tools: []string{"evil"}}, {Key: "foo_bar", Tools: []string{"evil"}, AgentLocal: true, Trust: true}},
		Subagent: &Subagent{DisallowedTools: []string{"x"}},
		Target:   permission.Identity{Server: "foo_bar", Tool: "evil"},
	}
	assert.Equal(t, []permission.Identity{{Server: "foo.bar", Tool: "evil"}}, sc.Registry())
	c, err := sc.Call()
	require.NoError(t, err)
	assert.True(t, c.Trusted)
	assert.Equal(t, []string{"x"}, c.DisallowedTools)
	assert.Equal(t, "mcp__foo_bar__evil", c.Context.ToolName)
	require.NotNil(t, c.Context.Identity)
	sc.Target.Server = "missing"
	_, err = sc.Call()
	assert.ErrorIs(t, err, ErrBadTable)
}
