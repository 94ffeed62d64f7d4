package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/helptext"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rulefix"
)

// TestAgentHelp: the help phrases come from the rooms' agent.Help: the default agent's roots
// first, every other agent's after "with --agent ID, ", examples' comments at column 52.
func TestAgentHelp(t *testing.T) {
	assert.Equal(t, "   sessionfix fix                                   # dry-run", helptext.ExampleLine("fix", agent.Example{Comment: "dry-run"}))
	assert.Equal(t, "   sessionfix scan --agent x", helptext.ExampleLine("scan", agent.Example{Args: "--agent x"}))
	assert.Equal(t, "a, b and c", reports.AndList([]string{"a", "b", "c"}))
	roots := helptext.Roots()
	assert.True(t, strings.HasPrefix(roots, "default: every agent's place that exists, --agent ID one agent's — "+all.Default.Core().Name+": "+all.HelpOf(all.Default).Roots+"; "), roots)
	d := helptext.ScanDescription()
	for _, a := range all.WithHelp() {
		if all.HelpOf(a).Roots != "" {
			assert.Contains(t, d, a.Core().Name+": "+all.HelpOf(a).Roots)
		}
		for _, e := range all.HelpOf(a).Scan {
			assert.Contains(t, d, "\n"+helptext.ExampleLine("scan", e)+"\n")
		}
	}
	assert.Contains(t, d, "("+all.HelpOf(all.Default).Dir+" -> /data/"+string(all.Default.Core().ID)+")")
	f := helptext.FixDescription()
	assert.Contains(t, f, "\n\n"+all.HelpOf(all.Default).Rewrite+" Provider-safe names")
	for _, a := range all.WithHelp() {
		if a != all.Default && all.HelpOf(a).Rewrite != "" {
			assert.Contains(t, f, "\n\n"+all.HelpOf(a).Rewrite+"\n\n")
		}
		for _, e := range all.HelpOf(a).Fix {
			assert.Contains(t, f, "\n"+helptext.ExampleLine("fix", e))
		}
	}
	assert.Equal(t, "Qwen Code sorts\nsessions by mtime", helptext.Mtime())
}

// TestFixRulesOnly: the flags fix refuses without --rules (rulefix.OnlyFlags) are fixRulesFlags after --rules, in
// the order they were listed by hand before.
func TestFixRulesOnly(t *testing.T) {
	assert.Equal(t, []string{"claude-version", "project", "project-key", "claude-json", "gemini-version", "before", "approval-mode", "copilot-version", "rules-from"}, rulefix.OnlyFlags())
}

// TestNamesHelpFromRoom: the names command's description says whose naming functions its
// columns show from the default agent's Help (Names, NamesExamples), not from cmd.
func TestNamesHelpFromRoom(t *testing.T) {
	h := all.HelpOf(all.Default)
	require.NotEmpty(t, h.Names)
	require.NotEmpty(t, h.NamesExamples)
	d := helptext.NamesDescription()
	assert.Contains(t, d, "its class (docs/naming.md) and what "+h.Names+".\n\n")
	for _, e := range h.NamesExamples {
		assert.True(t, strings.HasSuffix(d, "\n"+helptext.ExampleLine("names", e)), d)
	}
}
