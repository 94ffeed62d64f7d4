package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sarifLog is the part of a SARIF log the tests read.
type sarifLog struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Rules []struct {
					ID string `json:"id"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID  string `json:"ruleId"`
			Level   string `json:"level"`
			Message struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations []struct {
				Physical struct {
					Artifact struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
			Fingerprints map[string]string `json:"partialFingerprints"`
		} `json:"results"`
	} `json:"runs"`
}

// validSARIF checks out against the OASIS SARIF 2.1.0 schema (reports/testdata) and decodes it.
func validSARIF(t *testing.T, out string) sarifLog {
	t.Helper()
	f, err := os.Open("../../reports/testdata/sarif-schema-2.1.0.json")
	require.NoError(t, err)
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("sarif.json", doc))
	sch, err := c.Compile("sarif.json")
	require.NoError(t, err)
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	require.NoError(t, err)
	require.NoError(t, sch.Validate(v))
	var log sarifLog
	require.NoError(t, json.Unmarshal([]byte(out), &log))
	require.Len(t, log.Runs, 1)
	return log
}

// TestScanSARIF: scan --format sarif gives one result per name fix would rewrite (warning) or
// keeps although a provider rejects it (error), rule id per class, located at store and line.
func TestScanSARIF(t *testing.T) {
	env := testEnv(t)
	home := t.TempDir()
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", home)
	r := runCLI(t, env, "", "scan", "--format", "sarif", home)
	require.Equal(t, exitOK, r.code, r.err)
	run := validSARIF(t, r.out).Runs[0]
	assert.Len(t, run.Results, 35) // "would rewrite 35 names"
	var ids []string
	for _, x := range run.Tool.Driver.Rules {
		ids = append(ids, x.ID)
	}
	assert.Equal(t, []string{"sessionfix/name/legacy-dotted", "sessionfix/name/legacy-truncated-dotted"}, ids)
	first := run.Results[0]
	assert.Equal(t, "sessionfix/name/legacy-dotted", first.RuleID)
	assert.Equal(t, "warning", first.Level)
	assert.Equal(t, "mcp__foo.bar__get_data (legacy-dotted, call message.parts[0].functionCall.name) would be rewritten by sessionfix fix to mcp__foo_bar__get_data_0xybsnb.", first.Message.Text)
	assert.True(t, strings.HasSuffix(first.Locations[0].Physical.Artifact.URI, "/projects/-home-demo-src-api/chats/50bcb974-4071-429f-a75f-7496ad5cddee.jsonl"), first.Locations[0].Physical.Artifact.URI)
	assert.Equal(t, 3, first.Locations[0].Physical.Region.StartLine)
	assert.Len(t, first.Fingerprints["sessionfix/v1"], 32)

	// --keep-truncated: the truncated dotted names are kept and a provider rejects them: errors.
	r = runCLI(t, env, "", "scan", "--keep-truncated", "--format", "sarif", home)
	require.Equal(t, exitOK, r.code, r.err)
	levels := map[string]int{}
	for _, x := range validSARIF(t, r.out).Runs[0].Results {
		levels[x.RuleID+" "+x.Level]++
	}
	assert.Equal(t, map[string]int{"sessionfix/name/legacy-dotted warning": 28, "sessionfix/name/legacy-truncated-dotted error": 7}, levels)
}

// TestScanSARIFCodex: a Codex rollout's rejected names, one result per name+namespace group.
func TestScanSARIFCodex(t *testing.T) {
	env := testEnv(t)
	home := t.TempDir()
	copyTree(t, "../../fixtures/codex-real", home)
	r := runCLI(t, env, "", "scan", "--format", "sarif", home)
	require.Equal(t, exitOK, r.code, r.err)
	run := validSARIF(t, r.out).Runs[0]
	require.Len(t, run.Results, 4) // "would rewrite 4 names in 1 file"
	for _, x := range run.Results {
		assert.Equal(t, "sessionfix/name/codex-rejected", x.RuleID)
		assert.Positive(t, x.Locations[0].Physical.Region.StartLine)
	}
}
