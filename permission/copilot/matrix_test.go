package copilot

import (
	"bufio"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fx = "../../fixtures/copilot-real/"

// fixtureTools are the raw tools of the recorded home, in mcp-config.json order (each server's
// in the order its TOOLS lists them).
var fixtureTools = []Tool{
	{Server: "lit", Tool: "literature.search_pubmed"}, {Server: "lit", Tool: "literature_search_pubmed"}, {Server: "lit", Tool: "get+data"},
	{Server: "lit", Tool: "get_data_for_a_specific_location_and_date_range_extended_with_more_filters"}, {Server: "lit", Tool: "搜索文献"},
	{Server: "lit", Tool: "search"}, {Server: "lit", Tool: "ok_tool"},
	{Server: "foo.bar", Tool: "get_data"}, {Server: "foo.bar", Tool: "deploy.prod"},
	{Server: "foo_bar", Tool: "get_data"}, {Server: "foo_bar", Tool: "deploy.prod"},
}

type matrixCase struct {
	release, name, flags string
	rows                 []string // "server\ttool\tname_called\toutcome", sorted
}

func readMatrix(t *testing.T) []matrixCase {
	t.Helper()
	f, err := os.Open(fx + "rules.tsv")
	require.NoError(t, err)
	defer f.Close()
	byKey := map[string]*matrixCase{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		require.Len(t, c, 7, sc.Text())
		k := c[0] + " " + c[1]
		mc := byKey[k]
		if mc == nil {
			mc = &matrixCase{release: c[0], name: c[1], flags: c[2]}
			byKey[k] = mc
			order = append(order, k)
		}
		require.Equal(t, mc.flags, c[2])
		mc.rows = append(mc.rows, strings.Join(c[3:], "\t"))
	}
	var out []matrixCase
	for _, k := range order {
		sort.Strings(byKey[k].rows)
		out = append(out, *byKey[k])
	}
	return out
}

// setupOf reads a case's flags as the recording passed them (`copilot -p go <flags>`, shell
// words) with the extractor the audit uses.
func setupOf(t *testing.T, flags string) (Setup, []byte) {
	t.Helper()
	src := []byte("copilot -p go " + flags + "\n")
	ins, problems := ExtractShell("case.sh", src)
	require.Empty(t, problems)
	require.Len(t, ins, 1)
	return Setup{Tools: fixtureTools, Rules: ins[0].Rules, AllowAll: ins[0].AllowAll}, src
}

func predictedRows(res Result) []string {
	var out []string
	for _, c := range res.Calls {
		server, tool := "-", "-"
		if c.Tool != nil {
			server, tool = c.Tool.Server, c.Tool.Tool
		}
		out = append(out, strings.Join([]string{server, tool, c.Called, string(c.Outcome)}, "\t"))
	}
	sort.Strings(out)
	return out
}

// TestRuleMatrix: for every case of the recorded rule matrix (rules.tsv: 12 cases over 1.0.39,
// 1.0.40 and 1.0.102, 130 calls), the model predicts each call — the name called, the tool it
// reached (or none) and its outcome — and which tools were not offered.
func TestRuleMatrix(t *testing.T) {
	cases := readMatrix(t)
	require.Len(t, cases, 12)
	n := 0
	for _, c := range cases {
		t.Run(c.release+"/"+c.name, func(t *testing.T) {
			rel, err := ReleaseOf(c.release)
			require.NoError(t, err)
			s, _ := setupOf(t, c.flags)
			assert.Equal(t, c.rows, predictedRows(Evaluate(rel, s)))
			n += len(c.rows)
		})
	}
	assert.Equal(t, 130, n)
}

// TestDenyRawIsLostAndTheRewriteDenies is part C's prediction: under 1.0.102 each rule of the
// deny-raw case is lost (written for one tool, matching none), its rewrite plan gives the tool
// part that matches that tool (server part kept), and the rewritten flags deny exactly those
// four tools; under 1.0.39 the same rules were not lost.
func TestDenyRawIsLostAndTheRewriteDenies(t *testing.T) {
	var flags string
	for _, c := range readMatrix(t) {
		if c.release == "1.0.102" && c.name == "deny-raw" {
			flags = c.flags
		}
	}
	require.NotEmpty(t, flags)
	rel, err := ReleaseOf("1.0.102")
	require.NoError(t, err)
	old, err := ReleaseOf("1.0.39")
	require.NoError(t, err)
	s, src := setupOf(t, flags)
	var edits []Edit
	want := map[string]string{"lit(literature.search_pubmed)": "literature-search_pubmed", "lit(get+data)": "get-data",
		"lit(搜索文献)": "xn--u2un5au31afvj", "foo.bar(deploy.prod)": "deploy-prod"}
	for _, r := range s.Rules {
		if r.Kind != KindDeny {
			continue
		}
		meant, lost := Lost(rel, r, fixtureTools)
		assert.True(t, lost, r.Text)
		require.Len(t, meant, 1, r.Text)
		_, lostBefore := Lost(old, r, fixtureTools)
		assert.False(t, lostBefore, "1.0.39 matched %s", r.Text)
		p := PlanRewrite(rel, r, fixtureTools, src)
		require.NotNil(t, p.Edit, "%s: %s", r.Text, p.Held)
		assert.Equal(t, want[r.Text], p.NewTool, r.Text)
		edits = append(edits, *p.Edit)
	}
	require.Len(t, edits, 4)
	out, err := Apply(src, edits)
	require.NoError(t, err)
	assert.Equal(t, "copilot -p go --allow-all-tools --deny-tool 'lit(literature-search_pubmed)' --deny-tool 'lit(get-data)' --deny-tool 'lit(xn--u2un5au31afvj)' --deny-tool 'foo.bar(deploy-prod)'\n", string(out))
	ins, problems := ExtractShell("case.sh", out)
	require.Empty(t, problems)
	res := Evaluate(rel, Setup{Tools: fixtureTools, Rules: ins[0].Rules, AllowAll: true})
	denied := map[string]bool{}
	for _, tr := range res.Tools {
		if tr.Outcome == Denied {
			denied[tr.Tool.Server+"/"+tr.Tool.Tool] = true
		} else {
			assert.Equal(t, Ran, tr.Outcome, tr.Tool)
		}
	}
	assert.Equal(t, map[string]bool{"lit/literature.search_pubmed": true, "lit/get+data": true, "lit/搜索文献": true, "foo.bar/deploy.prod": true}, denied)
	// Nothing left to rewrite.
	for _, r := range ins[0].Rules {
		if r.Kind == KindDeny {
			assert.True(t, PlanRewrite(rel, r, fixtureTools, out).OK, r.Text)
		}
	}
}
