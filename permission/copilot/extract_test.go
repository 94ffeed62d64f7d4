package copilot

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// at returns the file's text at a span.
func at(src string, sp *Span) string {
	if sp == nil {
		return "<nil>"
	}
	return src[sp.Start:sp.End]
}

func TestExtractShell(t *testing.T) {
	src := `#!/bin/sh
# copilot --deny-tool 'lit(commented.out)'
export COPILOT_MODEL=gpt-4.1
COPILOT_OFFLINE=true copilot -p "review" --allow-all-tools \
  --deny-tool 'lit(literature.search_pubmed)' "foo.bar(deploy.prod)" \
  --deny-tool=lit\(get+data\),'lit(ok_tool)' -p go
alias cpl='copilot --excluded-tools lit-literature-search_pubmed,lit/get+data'
npx -y @github/copilot@1.0.102 --allow-tool "$TOOL" --deny-tool lit
copilot $EXTRA --available-tools=lit-search
ls | grep copilot
`
	ins, problems := ExtractShell("review.sh", []byte(src))
	require.Len(t, ins, 4)

	in := ins[0]
	assert.Equal(t, Pos{File: "review.sh", Line: 4, Col: 22, Offset: strings.Index(src, "copilot -p")}, in.Pos)
	assert.True(t, in.AllowAll)
	require.Len(t, in.Rules, 4)
	var texts []string
	for _, r := range in.Rules {
		texts = append(texts, string(r.Kind)+" "+r.Text)
	}
	assert.Equal(t, []string{"deny-tool lit(literature.search_pubmed)", "deny-tool foo.bar(deploy.prod)", "deny-tool lit(get+data)", "deny-tool lit(ok_tool)"}, texts)
	r := in.Rules[0]
	assert.Equal(t, "lit", r.Server)
	assert.Equal(t, "literature.search_pubmed", r.Tool)
	assert.Equal(t, 5, r.Pos.Line)
	assert.Equal(t, 16, r.Pos.Col, "the rule's first byte, inside the quotes")
	assert.Equal(t, "'lit(literature.search_pubmed)'", src[r.Token.Start:r.Token.End], "the quoted shell word")
	assert.Equal(t, "literature.search_pubmed", at(src, r.ToolSpan))
	assert.Equal(t, "deploy.prod", at(src, in.Rules[1].ToolSpan), "double quotes")
	// lit\(get+data\): the tool part's bytes are contiguous (the escapes are outside it).
	assert.Equal(t, "get+data", at(src, in.Rules[2].ToolSpan))
	assert.Equal(t, `--deny-tool=lit\(get+data\),'lit(ok_tool)'`, src[in.Rules[2].Token.Start:in.Rules[2].Token.End])
	assert.Equal(t, "ok_tool", at(src, in.Rules[3].ToolSpan))
	assert.Equal(t, 6, in.Rules[3].Pos.Line)

	// The alias body is shell too.
	require.Len(t, ins[1].Rules, 2)
	assert.Equal(t, KindExcluded, ins[1].Rules[0].Kind)
	assert.Equal(t, "lit-literature-search_pubmed", ins[1].Rules[0].Text)
	assert.Equal(t, "lit/get+data", ins[1].Rules[1].Text)
	assert.Equal(t, Pos{File: "review.sh", Line: 7, Col: 37, Offset: strings.Index(src, "lit-literature-search_pubmed")}, ins[1].Rules[0].Pos)

	// npx: the allow rule is an expansion: not read, said where; the deny is read.
	require.Len(t, ins[2].Rules, 1)
	assert.Equal(t, "lit", ins[2].Rules[0].Text)
	assert.False(t, ins[2].Rules[0].HasTool)
	require.Len(t, ins[2].Problems, 1)
	assert.Equal(t, 8, ins[2].Problems[0].Pos.Line)
	assert.Contains(t, ins[2].Problems[0].Reason, "--allow-tool could not be read: it holds $TOOL")
	assert.False(t, ins[2].Readable())

	// "$EXTRA" may hold rule flags.
	require.Len(t, ins[3].Problems, 1)
	assert.Contains(t, ins[3].Problems[0].Reason, "$EXTRA")
	assert.Equal(t, "lit-search", ins[3].Rules[0].Text)
	assert.Len(t, problems, 2)
}

// TestVariadicFlags: commander's reading: "--flag v1 v2" takes every following argument up to
// an option; "--flag=v" takes one; a bad rule is a problem.
func TestVariadicFlags(t *testing.T) {
	ins, problems := ExtractShell("x.sh", []byte("copilot --deny-tool a 'b(c)' --model m --deny-tool=d e 'f g(h)'\n"))
	require.Len(t, ins, 1)
	var texts []string
	for _, r := range ins[0].Rules {
		texts = append(texts, r.Text)
	}
	assert.Equal(t, []string{"a", "b(c)", "d"}, texts)
	assert.Empty(t, problems)
	_, problems = ExtractShell("x.sh", []byte("copilot --allow-tool 'shell(git push)' 'lit(a)b' x,y(z,w)\n"))
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0].Reason, `invalid rule format: "lit(a)b"`)
	parts, _ := SplitList("x, y(z,w) ,,")
	assert.Equal(t, []string{"x", "y(z,w)"}, parts)
}

func TestExtractYAML(t *testing.T) {
	src := `name: review
on: [pull_request]
jobs:
  review:
    runs-on: ubuntu-latest
    steps:
      - run: npm install -g @github/copilot
      - name: review
        run: |
          copilot -p "review the diff" \
            --deny-tool 'lit(literature.search_pubmed)' \
            --allow-tool "${{ inputs.tool }}"
      - run: copilot '--deny-tool=foo.bar(deploy.prod)' -p go
      - run: "copilot --excluded-tools lit-search -p go"
      - run: >-
          copilot --deny-tool 'lit(get+data)'
          -p go
`
	ins, problems := ExtractYAML(".github/workflows/review.yml", []byte(src))
	require.Len(t, ins, 4)
	r := ins[0].Rules[0]
	assert.Equal(t, "lit(literature.search_pubmed)", r.Text)
	assert.Equal(t, 11, r.Pos.Line)
	assert.Equal(t, 26, r.Pos.Col)
	assert.Equal(t, "literature.search_pubmed", at(src, r.ToolSpan))
	require.Len(t, ins[0].Problems, 1)
	assert.Contains(t, ins[0].Problems[0].Reason, "${{ inputs.tool }}")
	assert.Equal(t, 12, ins[0].Problems[0].Pos.Line)
	assert.Equal(t, "deploy.prod", at(src, ins[1].Rules[0].ToolSpan))
	assert.Equal(t, 13, ins[1].Rules[0].Pos.Line)
	assert.Equal(t, "lit-search", ins[2].Rules[0].Text)
	assert.Equal(t, 14, ins[2].Rules[0].Pos.Line)
	assert.Equal(t, "get+data", at(src, ins[3].Rules[0].ToolSpan), "folded block")
	assert.Equal(t, 16, ins[3].Rules[0].Pos.Line)
	assert.Len(t, problems, 1)
	for k, in := range ins {
		for _, r := range in.Rules {
			assert.Equal(t, k, r.Invocation)
		}
	}
	_, problems = ExtractYAML("bad.yml", []byte("a: [\n"))
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0].Reason, "not YAML")
	// A multi-line double-quoted scalar cannot be mapped: said, not guessed.
	_, problems = ExtractYAML("w.yml", []byte("run: \"copilot --deny-tool\n  lit(a.b)\"\n"))
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0].Reason, "do not map")
}

func TestPermissionsConfigAgentSkill(t *testing.T) {
	cfg := `{
  "locations": {
    "/home/demo/src/lab": {
      "tool_approvals": [
        {"kind": "commands", "commandIdentifiers": ["git status"]},
        {"kind": "mcp", "serverName": "lit", "toolName": "literature.search_pubmed"},
        {"kind": "mcp", "serverName": "foo.bar", "toolName": null}
      ],
      "allowed_directories": ["/tmp"]
    }
  }
}`
	rules, problems := ParsePermissionsConfig("permissions-config.json", []byte(cfg))
	assert.Empty(t, problems)
	require.Len(t, rules, 2)
	assert.Equal(t, KindGrant, rules[0].Kind)
	assert.Equal(t, "lit(literature.search_pubmed)", rules[0].Text)
	assert.Equal(t, "location /home/demo/src/lab", rules[0].Where)
	assert.Equal(t, 6, rules[0].Pos.Line)
	assert.Equal(t, "literature.search_pubmed", at(cfg, rules[0].ToolSpan))
	assert.False(t, rules[1].HasTool)
	// A grant 1.0.39 persisted (raw tool part) no longer allows under 1.0.102: lost; the plan
	// rewrites the JSON string's content.
	rel, _ := ReleaseOf("1.0.102")
	_, lost := Lost(rel, rules[0], fixtureTools)
	assert.True(t, lost)
	p := PlanRewrite(rel, rules[0], fixtureTools, []byte(cfg))
	require.NotNil(t, p.Edit, p.Held)
	out, err := Apply([]byte(cfg), []Edit{*p.Edit})
	require.NoError(t, err)
	assert.Contains(t, string(out), `"toolName": "literature-search_pubmed"`)
	assert.Equal(t, len(cfg)+0, len(out))

	_, problems = ParsePermissionsConfig("p.json", []byte(`{"locations": {"/x": {"tool_approvals": [{"kind": "mcp"}]}}}`))
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0].Reason, "without serverName")

	agent := "---\nname: reviewer\ntools: [\"lit/literature.search_pubmed\", 'foo.bar/*', lit-get-data]\n---\nReview code.\n"
	rules, problems = ParseAgent(".github/agents/reviewer.agent.md", []byte(agent))
	assert.Empty(t, problems)
	require.Len(t, rules, 3)
	assert.Equal(t, KindAgentTool, rules[0].Kind)
	assert.Equal(t, 3, rules[0].Pos.Line)
	assert.Equal(t, 10, rules[0].Pos.Col, "inside the quotes")
	assert.Equal(t, []Tool{{Server: "lit", Tool: "literature.search_pubmed"}}, Matching(rel, rules[0], fixtureTools))
	assert.Equal(t, []Tool{{Server: "foo.bar", Tool: "deploy.prod"}, {Server: "foo.bar", Tool: "get_data"}}, Matching(rel, rules[1], fixtureTools), "in Copilot's order")
	meant, lost := Lost(rel, rules[2], fixtureTools)
	assert.True(t, lost, "a registered name in tools: matches no MCP tool")
	assert.Equal(t, []Tool{{Server: "lit", Tool: "get+data"}}, meant)

	skill := "---\nname: lookup\nallowed-tools: lit(literature.search_pubmed), shell(git:*)\n---\n"
	rules, problems = ParseSkill(".github/skills/lookup/SKILL.md", []byte(skill))
	assert.Empty(t, problems)
	require.Len(t, rules, 2)
	assert.Equal(t, "literature.search_pubmed", at(skill, rules[0].ToolSpan))
	assert.Equal(t, "shell", rules[1].Server)
	assert.Len(t, Locations("/h/.copilot", "/w"), 5)
}

// TestRewriteHeldBack: a rewrite that would make the rule match two tools (their names
// sanitize alike), a rule meant for two tools, and a tool part written with quotes inside are
// held back, each saying why.
func TestRewriteHeldBack(t *testing.T) {
	rel, _ := ReleaseOf("1.0.102")
	tools := []Tool{{Server: "lit", Tool: "get+data"}, {Server: "lit", Tool: "get-data"}, {Server: "lit", Tool: "a.b"}, {Server: "lit", Tool: "a_b"}}
	src := []byte("copilot --deny-tool 'lit(get+data)' --deny-tool lit\\(a.\"b\"\\)\n")
	ins, problems := ExtractShell("x.sh", src)
	require.Empty(t, problems)
	p := PlanRewrite(rel, ins[0].Rules[0], tools, src)
	assert.Nil(t, p.Edit)
	assert.Contains(t, p.Held, "lit(get-data) would match 2 tools (lit/get+data, lit/get-data)")
	p = PlanRewrite(rel, ins[0].Rules[1], tools, src)
	assert.Nil(t, p.Edit)
	assert.Contains(t, p.Held, "quotes, escapes")
	r, err := ParseRule("lit(x)")
	require.NoError(t, err)
	r.Kind = KindDeny
	p = PlanRewrite(rel, r, tools, src)
	assert.Contains(t, p.Held, "names no configured tool")
	assert.False(t, p.OK)
}
