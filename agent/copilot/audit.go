package copilot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/mcpname"
	rulescopilot "github.com/sessionfix/sessionfix/permission/copilot"
	"github.com/sessionfix/sessionfix/permission/rules"
)

// The Copilot CLI rule audit (issue 26 item 3) on the shared rule-audit layer: this file finds
// the rules (persisted grants, custom agents, skills under the home and the workspace, and
// every copilot invocation of the files given with --rules-from) and the tools;
// permission/copilot knows what each release does with them; the engine (package audit)
// evaluates and reports.

// The audit's own option names (VersionOption is the release whose rules are "now").
const (
	BeforeOption    = "before"
	RulesFromOption = "rules-from"
)

// DefaultBefore is the release compared against when --before is not given: the last release
// before 1.0.40's sanitized tool parts.
const DefaultBefore = "1.0.39"

// auditOptions are the audit's own options (every one refused by another agent's audit).
var auditOptions = []agent.Option{
	{Name: VersionOption, Usage: "with --agent copilot: the release whose rules are \"now\" (default: the newest known, " + mcpname.CopilotLatestVersion + ")"},
	{Name: BeforeOption, Usage: "with --agent copilot: the release compared against (default: " + DefaultBefore + ", the last before sanitized tool parts)"},
	{Name: RulesFromOption, Repeatable: true, File: true, Usage: "with --agent copilot: a shell script, alias file or CI workflow (YAML) whose copilot invocations' --allow-tool, --deny-tool, --available-tools and --excluded-tools are audited (repeatable)"},
}

// Audit is audit --agent copilot (agent.Audit on the shared layer: Rules).
var Audit = &agent.Audit{Reads: "Copilot CLI permission rules",
	Flags: agent.OptionNames(auditOptions), Options: auditOptions,
	Rules: auditRules,
	Home:  func(env agent.Env) string { return Home(env.Getenv, env.Home) },
	Description: `

With --agent copilot, audit reads Copilot CLI's rules: the home's
permissions-config.json (persisted grants), custom agents (agents/*.md tools:) and
skills (allowed-tools) of the home and the workspace (.github/ of --project or the
current directory), and every copilot invocation's --allow-tool, --deny-tool,
--available-tools and --excluded-tools in the files given with --rules-from
(scripts, aliases, workflow YAML), each at file:line:col. Per rule and tool it says
whether the rule matches under --copilot-version (now) and --before; per tool the
outcome (ran, denied, not approved, not offered), one copilot command line at a
time (each with the home's grants, agents and skills): a tool is shown in the first
run where it lost a restriction, else where its outcome changed.
Since 1.0.40 a server(tool) rule matches only the sanitized tool part: a deny written
with the raw name is lost (--fail-on lost exits 5). A PATH is a copied ~/.copilot.
Tools come from --inventory or --discover (the home's mcp-config.json servers).`,
}

// auditRules reads the rules and tools of the audit's inputs and binds them to the two
// releases (rulescopilot.AuditEvaluation).
func auditRules(ctx context.Context, in agent.AuditInput) (*rules.Audit, error) {
	now, err := agent.OptionValue(in.Options, VersionOption, mcpname.CopilotLatestVersion, rulescopilot.ReleaseOf)
	if err != nil {
		return nil, err
	}
	before, err := agent.OptionValue(in.Options, BeforeOption, DefaultBefore, rulescopilot.ReleaseOf)
	if err != nil {
		return nil, err
	}
	var homes []string
	for _, p := range in.Paths {
		if fi, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		} else if !fi.IsDir() || !IsHome(p) && filepath.Base(filepath.Clean(p)) != homeDirName {
			return nil, usage.Errorf("audit --agent copilot: %s is not a Copilot CLI home (give rule files with --%s)", p, RulesFromOption)
		}
		homes = append(homes, p)
	}
	if len(homes) == 0 {
		homes = []string{Home(in.Engine.Env.Getenv, in.Engine.Env.Home)}
	}
	workspace := cmp.Or(in.Project, in.Cwd)
	if len(in.Paths) > 0 && in.Project == "" {
		workspace = "" // a copied home is audited with its own files only
	}
	a := &rules.Audit{ID: string(ID), Name: agentName, Words: rulescopilot.Words}
	var ain rulescopilot.AuditInput
	read := func(path, scope string, parse func(string, []byte) ([]rulescopilot.Rule, []rulescopilot.Problem), given bool) {
		data, _, err := owner.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !given:
			return
		case err != nil:
			a.Problems = append(a.Problems, fmt.Sprintf("%s: %v", path, err))
			return
		}
		a.Read = append(a.Read, path)
		rs, problems := parse(path, data)
		for _, p := range problems {
			a.Problems = append(a.Problems, p.String())
		}
		ain.Rules = append(ain.Rules, rs...)
		a.Files = append(a.Files, rules.File{Path: path, Scope: scope, Rules: len(rs)})
	}
	for _, h := range homes {
		for _, l := range rulescopilot.Locations(h, "") {
			globbed(l.Glob, func(p string) { read(p, l.Scope, parserOf(l.Source), false) })
		}
	}
	if workspace != "" {
		for _, l := range rulescopilot.Locations("", workspace) {
			globbed(l.Glob, func(p string) { read(p, l.Scope, parserOf(l.Source), false) })
		}
	}
	for _, f := range in.Options.Strings(RulesFromOption) {
		read(f, "script", func(path string, data []byte) ([]rulescopilot.Rule, []rulescopilot.Problem) {
			invs, problems := rulescopilot.Extract(path, data)
			var rs []rulescopilot.Rule
			for k, iv := range invs {
				rs = append(rs, iv.Rules...)
				ain.AllowAll = ain.AllowAll || iv.AllowAll
				ain.Runs = append(ain.Runs, rulescopilot.Run{Key: rulescopilot.InvocationKey(path, k), AllowAll: iv.AllowAll, Where: iv.Pos.String()})
				problems = append(problems, iv.Problems...)
			}
			return rs, problems
		}, true)
	}
	var servers []agent.Server
	for _, h := range homes {
		ss, err := ReadServers(filepath.Join(h, MCPConfigFile), in.Engine.Vars)
		if err == nil {
			servers = append(servers, ss...)
		}
	}
	var order []string
	for _, s := range servers {
		if !slices.Contains(order, s.Key) {
			order = append(order, s.Key)
		}
	}
	inv, err := agent.AuditInventory(ctx, in, a, servers, "Copilot CLI MCP server configured (no mcpServers in "+MCPConfigFile+")", "")
	if err != nil {
		return nil, err
	}
	if inv != nil {
		ain.Tools = inventoryTools(inv, order)
	}
	ain.Runs = rulescopilot.RunsOf(ain.Rules, ain.Runs, false)
	a.Eval = rulescopilot.AuditEvaluation(ain, now, before)
	for i := range a.Eval.Tools {
		a.Eval.Tools[i].Source = "file"
		if in.Discover {
			a.Eval.Tools[i].Source = "discovered"
		}
	}
	allow := "no"
	if ain.AllowAll {
		allow = "yes (an invocation allows every tool)"
	}
	a.Facts = []rules.Fact{{Key: "allow_all_tools", Label: "allow all tools", Value: allow}}
	return a, nil
}

func parserOf(source string) func(string, []byte) ([]rulescopilot.Rule, []rulescopilot.Problem) {
	switch source {
	case rulescopilot.SourcePermissions:
		return rulescopilot.ParsePermissionsConfig
	case rulescopilot.SourceAgent:
		return rulescopilot.ParseAgent
	}
	return rulescopilot.ParseSkill
}

// globbed calls f for each file matching glob, sorted.
func globbed(glob string, f func(string)) {
	m, _ := filepath.Glob(glob)
	sort.Strings(m)
	for _, p := range m {
		f(p)
	}
}

// inventoryTools are inv's tools, servers in order first (then the others, sorted), each
// server's tools in the inventory's order.
func inventoryTools(inv *mcpinventory.Inventory, order []string) []rulescopilot.Tool {
	var out []rulescopilot.Tool
	for _, t := range inv.InOrder(order) {
		out = append(out, rulescopilot.Tool{Server: t.Server, Tool: t.Tool})
	}
	return out
}
