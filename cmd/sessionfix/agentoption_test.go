package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/pipeline"
)

// TestAnotherAgentsOptionIsRefused: scan, fix and check given --agent A and an option of
// another agent B (agent.Agent.Options; check: SentAsOption) refuse it, exit 2, naming B — as
// audit refuses another agent's audit flags — instead of reading it nowhere (both binaries of
// stop 17 accepted `scan --agent qwen --codex-config X` and went on, exit 0). Every
// (option, agent) pair of the rooms' data is tried.
func TestAnotherAgentsOptionIsRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "some.file")
	n := 0
	for _, owner := range all.Agents {
		type opt struct {
			o       agent.Option
			command []string
		}
		var opts []opt
		for _, o := range all.OptionsOf(owner) {
			for _, c := range []string{"scan", "fix", "check"} {
				opts = append(opts, opt{o, []string{c}})
			}
		}
		if all.SentAsOptionOf(owner) != nil {
			opts = append(opts, opt{*all.SentAsOptionOf(owner), []string{"check"}})
		}
		for _, x := range opts {
			for _, id := range all.Selectable() {
				other := all.Lookup(id)
				if other == owner || slices.ContainsFunc(all.OptionsOf(other), func(o agent.Option) bool { return o.Name == x.o.Name }) {
					continue
				}
				args := slices.Clone(x.command)
				if args[0] == "check" {
					args = append(args, "--provider", "kimi")
				}
				args = append(args, "--agent", string(id), "--"+x.o.Name)
				if !x.o.Bool {
					args = append(args, map[bool]string{true: cfg, false: "1.0.0"}[x.o.File])
				}
				args = append(args, dir)
				r := runCLI(t, testEnv(t), "", args...)
				n++
				assert.Equal(t, exitcode.Usage, r.code, "%v: %s", args, r.err)
				assert.Equal(t, "sessionfix: --"+x.o.Name+" is a "+strings.Join(pipeline.OptionOwners(x.o.Name), " and ")+" flag; --agent "+string(id)+" does not take it\n", r.err, "%v", args)
				assert.Contains(t, pipeline.OptionOwners(x.o.Name), owner.Core().Name)
				assert.Empty(t, r.out, "%v", args)
			}
		}
	}
	require.GreaterOrEqual(t, n, 10, "every option of every agent against every other agent")
}

// An agent's own option with its --agent, or with no --agent (each file's agent detected), is
// taken as before.
func TestOwnAgentsOptionIsTaken(t *testing.T) {
	home, _ := codexHome(t, readFixture(t, "rollout-codex-0.169.0.jsonl"), true)
	for _, args := range [][]string{
		{"scan", "--agent", "codex", "--codex-config", filepath.Join(home, "config.toml"), home},
		{"scan", "--codex-config", filepath.Join(home, "config.toml"), home},
		{"check", "--provider", "kimi", "--agent", "qwen", "--qwen-version", "0.24.4", t.TempDir()},
	} {
		r := runCLI(t, testEnv(t), "", args...)
		assert.Contains(t, []int{exitcode.OK, exitcode.Finding}, r.code, "%v: %s", args, r.err)
	}
}
