package main

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/exitcode"
)

// TestAuditAgentsFromTheRooms: audit's --agent choice and its per-agent flags come from the
// rooms (agent.Agent.Audit): every agent flag a room declares is one of audit's flags, and an
// audit of each other agent refuses it, naming the room's agent.
func TestAuditAgentsFromTheRooms(t *testing.T) {
	atRepoRoot(t)
	env := testEnv(t)
	auditors := all.Auditors()
	require.GreaterOrEqual(t, len(auditors), 2)
	flags := map[string]bool{}
	for _, f := range newAuditCommand(env).Flags {
		flags[f.Names()[0]] = true
	}
	for _, o := range auditors {
		require.NotEmpty(t, all.AuditOf(o).Reads, o.Core().ID)
		for _, f := range all.AuditOf(o).Flags {
			assert.True(t, flags[f], "%s's audit flag --%s is not a flag of audit", o.Core().ID, f)
			for _, a := range auditors {
				if a == o || slices.Contains(all.AuditOf(a).Flags, f) {
					continue // a flag two audits take (--before) is one flag
				}
				res := runCLI(t, env, "", "audit", "--agent", string(a.Core().ID), "--"+f, "x", "--inventory", "fixtures/claude-audit/inventory.json")
				assert.Equal(t, exitcode.Usage, res.code, "--agent %s --%s: %s", a.Core().ID, f, res.err)
				assert.Contains(t, res.err, "--"+f+" is a ", "--agent %s --%s", a.Core().ID, f)
				assert.Contains(t, res.err, o.Core().Name, "--agent %s --%s", a.Core().ID, f)
			}
		}
	}
	// The flags a room declares (agent.Audit.Options) are audit's flags, with the room's usage.
	usage := map[string]string{}
	for _, f := range newAuditCommand(env).Flags {
		if d, ok := f.(cli.DocGenerationFlag); ok {
			usage[f.Names()[0]] = d.GetUsage()
		}
	}
	declared := 0
	for _, o := range auditors {
		for _, opt := range all.AuditOf(o).Options {
			declared++
			assert.Contains(t, usage[opt.Name], opt.Usage, "%s's audit option --%s (an option several audits declare joins their usages)", o.Core().ID, opt.Name)
		}
	}
	assert.NotZero(t, declared, "Claude Code's room declares its audit flags")
	res := runCLI(t, env, "", "audit", "--agent", "codex")
	assert.Equal(t, exitcode.Usage, res.code)
	assert.Contains(t, res.err, `--agent must be gemini, qwen, claude, kilo, copilot or cline, not "codex"`, "an agent without an audit")
}
