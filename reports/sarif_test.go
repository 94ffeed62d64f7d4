package reports

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/owenrumney/go-sarif/v2/sarif"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/reports/sariftest"
)

func TestWriteSARIF(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteSARIF(&b, "sessionfix", "1.2.3", "https://example.test",
		[]SARIFRule{{ID: "provider/kimi/pattern", Name: "KimiPattern", Short: "Kimi rejects the name", HelpURI: "https://example.test/h"}},
		[]SARIFResult{
			{RuleID: "provider/kimi/pattern", Message: "a.b rejected", Path: "s/one.jsonl", Line: 7, Fingerprint: "ab12"},
			{RuleID: "provider/kimi/pattern", Message: "x.y rejected at row part id=1", Path: "/abs/opencode.db"},
		}))
	sariftest.Validate(t, b.Bytes())
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name    string `json:"name"`
					Version string `json:"version"`
					Rules   []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Locations []struct {
					Physical struct {
						Artifact struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region *struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				Fingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &log))
	assert.Equal(t, "2.1.0", log.Version)
	require.Len(t, log.Runs, 1)
	r := log.Runs[0]
	assert.Equal(t, "1.2.3", r.Tool.Driver.Version)
	assert.Equal(t, "provider/kimi/pattern", r.Tool.Driver.Rules[0].ID)
	require.Len(t, r.Results, 2)
	assert.Equal(t, "error", r.Results[0].Level)
	assert.Equal(t, "s/one.jsonl", r.Results[0].Locations[0].Physical.Artifact.URI)
	assert.Equal(t, 7, r.Results[0].Locations[0].Physical.Region.StartLine)
	assert.Equal(t, map[string]string{"sessionfix/v1": "ab12"}, r.Results[0].Fingerprints)
	assert.Nil(t, r.Results[1].Locations[0].Physical.Region) // a row: no line
}

func TestWriteSARIFEmpty(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteSARIF(&b, "sessionfix", "dev", "https://example.test", nil, nil))
	sariftest.Validate(t, b.Bytes())
	assert.Contains(t, b.String(), `"results": []`)
}

// TestSARIFSchemaRejects: the schema check can fail (a log without runs, a bad version).
func TestSARIFSchemaRejects(t *testing.T) {
	sch := sariftest.Schema(t)
	for _, bad := range []string{`{"version":"2.1.0"}`, `{"version":"2.0.0","runs":[]}`,
		`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"level":"fatal"}]}]}`} {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(bad)))
		require.NoError(t, err)
		assert.Error(t, sch.Validate(v), bad)
	}
}

// TestWriteSARIFRunInvocation: a run's invocation (executionSuccessful false, an error
// notification at a path, a warning without one) is valid SARIF 2.1.0 and reads back through
// go-sarif's own type; without one, no "invocations" member (the log is as WriteSARIF's).
func TestWriteSARIFRunInvocation(t *testing.T) {
	var b bytes.Buffer
	inv := &SARIFInvocation{Notifications: []SARIFNotification{
		{Message: "s/one.jsonl: open: permission denied", Path: "s/one.jsonl"},
		{Level: "warning", Message: "no store found under s"},
	}}
	require.NoError(t, WriteSARIFRun(&b, "sessionfix", "dev", "https://example.test", nil, nil, inv))
	sariftest.Validate(t, b.Bytes())
	var log sarif.Report
	require.NoError(t, json.Unmarshal(b.Bytes(), &log))
	require.Len(t, log.Runs, 1)
	require.Len(t, log.Runs[0].Invocations, 1)
	got := log.Runs[0].Invocations[0]
	require.NotNil(t, got.ExecutionSuccessful)
	assert.False(t, *got.ExecutionSuccessful)
	require.Len(t, got.ToolExecutionNotifications, 2)
	n := got.ToolExecutionNotifications
	assert.Equal(t, "error", n[0].Level)
	assert.Equal(t, "s/one.jsonl: open: permission denied", *n[0].Message.Text)
	assert.Equal(t, "s/one.jsonl", *n[0].Locations[0].PhysicalLocation.ArtifactLocation.URI)
	assert.Equal(t, "warning", n[1].Level)
	assert.Empty(t, n[1].Locations)

	b.Reset()
	require.NoError(t, WriteSARIFRun(&b, "sessionfix", "dev", "https://example.test", nil, nil, &SARIFInvocation{Successful: true}))
	sariftest.Validate(t, b.Bytes())
	assert.Contains(t, b.String(), `"executionSuccessful": true`)
	assert.NotContains(t, b.String(), "toolExecutionNotifications")
	b.Reset()
	require.NoError(t, WriteSARIF(&b, "sessionfix", "dev", "https://example.test", nil, nil))
	assert.NotContains(t, b.String(), "invocations")
}

// WriteSARIF writes one SARIF 2.1.0 log with one run of tool (name, version, information URI)
// holding rules and results, in the order given, and no invocation.
func WriteSARIF(w io.Writer, tool, version, infoURI string, rules []SARIFRule, results []SARIFResult) error {
	return WriteSARIFRun(w, tool, version, infoURI, rules, results, nil)
}

// WriteSARIFRun is WriteSARIF with the run's invocation (nil: none written): a run that
// read nothing at all still writes a valid log, no results, its errors as notifications.
func WriteSARIFRun(w io.Writer, tool, version, infoURI string, rules []SARIFRule, results []SARIFResult, inv *SARIFInvocation) error {
	return WriteSARIFRuns(w, tool, version, infoURI, []SARIFRun{{Rules: rules, Results: results, Invocation: inv}})
}
