package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const rulesDir = "../../fixtures/gemini-real/rules/"

// caseConfig reads one case directory of the recording (rules/deny, rules/allow, rules/gain):
// its settings.json as the user's, its policies/*.toml as user policies, and the tools of each
// server from the TOOLS variable the recording gave fake_mcp.py (test knowledge: a user's
// inventory comes from --inventory or --discover), in settings order.
func caseConfig(t *testing.T, dir string) Config {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "settings.json"))
	require.NoError(t, err)
	sf, err := ParseSettings(filepath.Join(dir, "settings.json"), data, ScopeUser)
	require.NoError(t, err)
	var raw struct {
		MCPServers map[string]struct {
			Env map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(data, &raw))
	c := Config{Settings: []*SettingsFile{sf}}
	for _, s := range sf.Servers {
		for _, tool := range strings.Split(raw.MCPServers[s.Key].Env["TOOLS"], ",") {
			c.Tools = append(c.Tools, Tool{Server: s.Key, Name: tool})
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "policies", "*.toml"))
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		c.Policies = append(c.Policies, ParsePolicy(f, b, ScopeUser))
	}
	return c
}

type outcomeRow struct {
	Case     string             `json:"case"`
	Mode     string             `json:"mode"`
	RuleFile string             `json:"rule_file"`
	Rule     string             `json:"rule"`
	Server   string             `json:"server"`
	Tool     string             `json:"tool"`
	Outcome  map[string]*string `json:"outcome"`
}

func readOutcomes(t *testing.T) []outcomeRow {
	t.Helper()
	b, err := os.ReadFile(rulesDir + "outcomes.json")
	require.NoError(t, err)
	var doc struct {
		Rows []outcomeRow `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	require.Len(t, doc.Rows, 36)
	return doc.Rows
}

// TestOutcomesMatchTheRecording: for every (rule, tool) row of rules/outcomes.json and every
// release the recording ran it on (0.10.0, 0.32.1, 0.33.2, 0.61.0; null: the run hung), the
// model predicts the outcome the real release showed, headless, in the row's approval mode.
func TestOutcomesMatchTheRecording(t *testing.T) {
	rows := readOutcomes(t)
	checked := 0
	results := map[string]*Result{}
	for _, row := range rows {
		mode := ModeDefault
		if row.Mode == "--yolo" {
			mode = ModeYolo
		}
		for release, want := range row.Outcome {
			if want == nil {
				continue
			}
			key := row.Case + "/" + release
			res := results[key]
			if res == nil {
				c := caseConfig(t, rulesDir+row.Case)
				c.Release, c.Mode = MustRelease(release), mode
				res = Evaluate(c)
				results[key] = res
			}
			v := res.Verdict(Tool{row.Server, row.Tool})
			require.NotNil(t, v, "%s: %s/%s", key, row.Server, row.Tool)
			assert.Equal(t, Outcome(*want), v.Outcome, "%s %s %q: %s/%s (%s)", key, row.RuleFile, row.Rule, row.Server, row.Tool, v.Why)
			checked++
		}
	}
	assert.Equal(t, 14*4+14*3+8*2, checked, "every observed outcome is compared")
}
