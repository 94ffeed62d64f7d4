package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionfix/sessionfix/auditrun"
	"github.com/sessionfix/sessionfix/naming"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/reports"
)

// TestAuditRunIsTheHook: audit's one run hands the shared flags and the rooms' option values
// to the agent's agent.Audit.Run, lets it call the shared checks, and writes what it returns:
// the document with "redispatch": [] appended, the tools table, the summary on stderr, and
// the exit status from its counts (--fail-on lost: 5) unless an input was unreadable (3).
// auditorAgent is a made-up agent with an audit (agent.Auditor).
type auditorAgent struct {
	core  agent.Core
	audit *agent.Audit
}

func (a *auditorAgent) Core() *agent.Core   { return &a.core }
func (a *auditorAgent) Audit() *agent.Audit { return a.audit }

var _ agent.Auditor = (*auditorAgent)(nil)

func TestAuditRunIsTheHook(t *testing.T) {
	dir := t.TempDir()
	env := testEnv(t)
	var got agent.AuditInput
	partial := false
	acme := &auditorAgent{core: agent.Core{ID: "acme", Name: "Acme"}, audit: &agent.Audit{Run: func(_ context.Context, in agent.AuditInput) (*agent.AuditResult, error) {
		got = in
		if err := in.Validate(); err != nil {
			return nil, err
		}
		if err := in.Baseline(); err != nil {
			return nil, err
		}
		tab := &reports.Table{Columns: []string{"rule", "tool"}, Rows: [][]string{{"allow x", "x"}}}
		return &agent.AuditResult{Pairs: tab, Tools: tab,
			Doc: func(rd []naming.Redispatch) json.Marshaler {
				return reports.Document(map[string]any{"acme": 1, "redispatch": rd})
			},
			SARIF:      func() []reports.SARIFResult { return nil },
			Summary:    func(w io.Writer) { fmt.Fprintln(w, "audit: acme summary") },
			FailCounts: func([]reports.SARIFResult) map[string]int { return map[string]int{"lost": 2} },
			Partial:    func() bool { return partial }}, nil
	}}}
	var errb bytes.Buffer
	env.Err = &errb
	out, tools := filepath.Join(dir, "o.json"), filepath.Join(dir, "t.csv")
	opts := auditrun.Options{Paths: []string{"p"}, Settings: []string{"user=s.json"}, Format: "json", Out: out, ToolsOut: tools,
		FailOn: []string{"lost,gained"}, Mode: "default", DiscoverTimeout: 1}
	err := auditrun.Run(context.Background(), auditEnv(env), acme, opts, true, agent.Values{"acme-version": {"1.2"}})
	assert.Equal(t, exitcode.Finding, exitCode(err))
	assert.Equal(t, []string{"p"}, got.Paths)
	assert.Equal(t, []string{"user=s.json"}, got.Settings)
	assert.True(t, got.ModeSet)
	assert.Equal(t, "1.2", got.Options.String("acme-version"))
	assert.NotNil(t, got.Engine.History)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, []any{}, doc["redispatch"])
	tb, err := os.ReadFile(tools)
	require.NoError(t, err)
	assert.Equal(t, "rule,tool\nallow x,x\n", string(tb))
	assert.Contains(t, errb.String(), "audit: acme summary\n")
	assert.Contains(t, errb.String(), "audit: --fail-on lost: 2 pairs lost\n")

	partial = true
	assert.Equal(t, exitcode.Partial, exitCode(auditrun.Run(context.Background(), auditEnv(env), acme, opts, false, nil)))

	opts.Format = "yaml" // the shared checks are the command's: the run gets a usage error back
	assert.Equal(t, exitcode.Usage, exitCode(auditrun.Run(context.Background(), auditEnv(env), acme, opts, false, nil)))
}
