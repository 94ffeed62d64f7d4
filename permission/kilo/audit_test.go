package kilo

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionfix/sessionfix/permission/rules"
)

// TestAuditEvaluationRecording: the recording's kilo.json on the shared layer (7.7.7 now, 7.0.33
// before): nothing lost or gained (the releases name and match alike); the tools' outcomes are
// rules.tsv's (deploy.prod of both servers not offered, the merged names hidden behind the tool
// registered later, the rest ran); the deny of foo_bar_deploy_prod is a broad rule (it reaches
// both servers); the two merged tools are shadowed findings, the 78-unit name an over-long one.
func TestAuditEvaluationRecording(t *testing.T) {
	rs, tools := fixtureConfig(t)
	res := rules.Evaluate(AuditEvaluation(rs, tools, "7.7.7", "7.0.33"), rules.LostFirst)
	assert.Zero(t, res.Counts.Lost)
	assert.Zero(t, res.Counts.Gained)
	got := map[string]string{}
	for _, tr := range res.Tools {
		got[tr.Tool.String()] = Words.OfOutcome(tr.Now.Outcome)
	}
	assert.Equal(t, map[string]string{
		"lit/literature.search_pubmed": "hidden", "lit/literature_search_pubmed": "ran", "lit/get+data": "ran",
		"lit/get_data_for_a_specific_location_and_date_range_extended":                   "ran",
		"lit/query_documents_by_semantic_similarity_with_metadata_filters_and_reranking": "ran",
		"lit/搜索文献": "ran", "lit/search": "ran",
		"foo.bar/get_data": "hidden", "foo.bar/deploy.prod": "hidden", "foo_bar/get_data": "ran", "foo_bar/deploy.prod": "hidden",
	}, got)
	var findings []string
	for _, f := range res.Findings {
		w := f.Class
		if f.Rule >= 0 {
			w += " " + res.Rules[f.Rule].Text
		}
		if f.Tool >= 0 {
			w += " " + res.Tools[f.Tool].Tool.String()
		}
		findings = append(findings, w)
	}
	assert.Equal(t, []string{
		`broad-rule "foo_bar_deploy_prod": "deny"`,
		"shadowed lit/literature.search_pubmed",
		"over-long lit/query_documents_by_semantic_similarity_with_metadata_filters_and_reranking",
		"shadowed foo.bar/get_data",
		"shadowed foo.bar/deploy.prod",
	}, findings, fmt.Sprint(findings))
}
