package naming

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

func TestDecisionKeepsRejected(t *testing.T) {
	site := func(name string, ro bool) *store.Site { return &store.Site{Name: name, ReadOnly: ro} }
	tests := []struct {
		name string
		d    Decision
		want bool
	}{
		{"a call nothing attributes (its namespace site, marked by its namer)", Decision{Site: site("mcp__lit", false), Class: "codex-unattributed", Action: ActKeep, Rejected: true}, true},
		{"the same site, not marked", Decision{Site: site("mcp__lit", false), Class: "codex-unattributed", Action: ActKeep}, false},
		{"an unsafe name nothing marks", Decision{Site: site("mcp__lit__get+data", false), Class: "codex-unattributed", Action: ActKeep}, true},
		{"dotted name kept by --keep-truncated", Decision{Site: site("mcp__com.example.enterprise-___documents_by_semantic_similarity", false), Class: mcpname.ClassLegacyTruncatedDotted, Action: ActKeep}, true},
		{"middle-truncated, provider-safe", Decision{Site: site("mcp__lit__get_data_for_a_spe___location_and_date_range_extended", false), Class: mcpname.ClassLegacyTruncated, Action: ActKeep}, false},
		{"lossy, provider-safe", Decision{Site: site("mcp__lit__get_data", false), Class: mcpname.ClassLossyLegacy, Action: ActKeep}, false},
		{"reported-only record", Decision{Site: site("mcp__lit__literature.search_pubmed", true), Class: mcpname.ClassLegacyDotted, Action: ActKeep}, false},
		{"rewritten", Decision{Site: site("mcp__lit__literature.search_pubmed", false), Class: mcpname.ClassLegacyDotted, Action: ActRewrite}, false},
		{"lone surrogate kept", Decision{Site: &store.Site{Name: "mcp__a__\ufffd", Units: []uint16{'m', 0xd800}}, Class: mcpname.ClassLegacyDotted, Action: ActKeep}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.d.KeepsRejected())
		})
	}
}
