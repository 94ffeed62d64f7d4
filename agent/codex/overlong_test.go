package codex

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/naming"
)

// TestCodexOwnOverLongNameKept (issue 23 item 7): Codex 0.169.0 registered the raw tool
// lit/get_data_for_a_specific_location_and_date_range_extended as namespace mcp__lit + that
// name (the genuine rollout, line 15): 66 units sent flat, over the 64 of Chat Completions.
// The namer keeps it (it is Codex's own name) as codex-over-long, a kept name a provider rejects
// (scan --fail-on kept counts it as check does), naming the providers; every other call of the
// rollout stays clean. Before, the name was "clean" and scan --fail-on kept said 0.
func TestCodexOwnOverLongNameKept(t *testing.T) {
	snap := scanCodex(t, codexFixtures+"rollout-codex-0.169.0.jsonl")
	ds := Agent.Core().Namer.Decide(snap, naming.Policy{})
	var over []naming.Decision
	for _, d := range ds {
		if d.Site.Field == FieldNamespace {
			continue
		}
		if d.Class == ClassCodexOverLong {
			over = append(over, d)
			continue
		}
		assert.Equal(t, naming.ActNone, d.Action, d.Site.Name)
	}
	require.Len(t, over, 1)
	d := over[0]
	assert.Equal(t, "get_data_for_a_specific_location_and_date_range_extended", d.Site.Name)
	assert.EqualValues(t, 15, d.Site.Loc.Line)
	assert.Equal(t, naming.ActKeep, d.Action)
	assert.True(t, d.KeepsRejected(), "counted as a kept name a provider rejects")
	assert.Contains(t, d.Note, "66 units as sent flat (mcp__lit__get_data_for_a_specific_location_and_date_range_extended)")
	assert.Contains(t, d.Note, "rejected by openai-chat (66 code points > 64)")
}
