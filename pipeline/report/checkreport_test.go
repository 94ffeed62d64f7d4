package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/reports"
)

// TestCheckReportReleaseMember: the release a check ran with is the report's last member,
// named by its agent's SentAsOption.Report (bytes of docs/md's "qwen_release"), with
// names keeping '<' and '&' as the rest of the report does; no release, or an agent without
// such a member, writes none.
func TestCheckReportReleaseMember(t *testing.T) {
	a := all.Default
	require.NotNil(t, all.SentAsOptionOf(a))
	require.Equal(t, "qwen_release", all.SentAsOptionOf(a).Report)
	rep := CheckReport{Skipped: map[string]int{}, Findings: []CheckFinding{{Name: "mcp__a<b__c&d", Kind: "call"}}}
	var plain bytes.Buffer
	require.NoError(t, reports.WriteJSON(&plain, rep))
	assert.NotContains(t, plain.String(), "release")
	assert.Contains(t, plain.String(), `"name": "mcp__a<b__c&d"`)

	rep.Release, rep.ReleaseAgent = "0.24.4", a.Core().ID
	var got bytes.Buffer
	require.NoError(t, reports.WriteJSON(&got, rep))
	want := bytes.TrimSuffix(plain.Bytes(), []byte("\n}\n"))
	want = append(want, []byte(",\n  \"qwen_release\": \"0.24.4\"\n}\n")...)
	assert.Equal(t, string(want), got.String())
	var back map[string]any
	require.NoError(t, json.Unmarshal(got.Bytes(), &back))
	assert.Equal(t, "0.24.4", back["qwen_release"])

	rep.ReleaseAgent = "nosuchagent"
	got.Reset()
	require.NoError(t, reports.WriteJSON(&got, rep))
	assert.Equal(t, plain.String(), got.String())
}
