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

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/mcpname"
	rulescopilot "github.com/sessionfix/sessionfix/permission/copilot"
	"github.com/sessionfix/sessionfix/store"
)

// ProjectOption is fix --rules --agent copilot's --project (the workspace whose .github/ agents
// and skills are read; one flag with the other migrations' --project).
const ProjectOption = "project"

// RuleFix is Copilot CLI's rule migration as fix --rules --agent copilot offers it (issue 26
// item 4): every server(tool) rule (--allow-tool and --deny-tool of the copilot command lines
// of the --rules-from files, persisted grants, skills' allowed-tools) whose tool part names a
// configured tool but matches it under --copilot-version no more (since 1.0.40 the tool part is
// compared sanitized) gets the tool part that does, in place: only the bytes of the tool part
// change, inside the quoted shell word or YAML scalar (or JSON string) it was read from, the
// server part kept as configured (permission/copilot.PlanRewrite). A rewrite is held back, and
// said, when the new tool part would match more than that one tool (tools that sanitize alike)
// or when the tool part cannot be rewritten in place (quotes or escapes inside it). The edits are
// written by the engine's rule-file store.
var RuleFix = &agent.RuleFix{
	What:  "the Copilot CLI rule migration",
	Rules: "Copilot CLI rules",
	Usage: "with --agent copilot: Copilot CLI's --allow-tool/--deny-tool in the --rules-from files, persisted grants and skills' allowed-tools",
	Options: []agent.Option{
		{Name: VersionOption, Usage: "with --rules --agent copilot: the release the rules are migrated to (default: " + mcpname.CopilotLatestVersion + ")"},
		{Name: RulesFromOption, Repeatable: true, File: true, Usage: "with --rules --agent copilot: a shell script, alias file or CI workflow (YAML) whose copilot invocations' --allow-tool and --deny-tool rules are migrated (repeatable)"},
		{Name: ProjectOption, File: true, Usage: "with --rules --agent copilot: the workspace whose .github/agents and skills are read (default: the current directory)"},
	},
	Plan: planRuleFix,
	Help: `

COPILOT CLI RULES (--rules --agent copilot): from 1.0.40 a server(tool) rule
matches only the sanitized tool part, so --deny-tool 'lit(literature.search_pubmed)'
no longer denies. fix --rules --agent copilot --inventory FILE --rules-from FILE
plans, for every --allow-tool and --deny-tool of each copilot command line of the
--rules-from files (scripts, aliases, workflow YAML), the home's persisted grants
and the skills' allowed-tools, whose tool part names an inventory tool but matches
it no more under --copilot-version, the tool part that does (server part as
configured: lit(literature-search_pubmed)), and shows per command line the tool's
outcome now and after the rewrite. Held back and said: a new tool part that would
match more than the one tool (tools that sanitize alike shadow each other), a tool
part written with quotes or escapes inside it. With --apply only the tool part's
bytes change, inside the quoted shell word or YAML scalar, with backups in a run
that sessionfix undo restores.`,
}

// planRuleFix is RuleFix.Plan: the rules of the homes (the PATHs, else $COPILOT_HOME or
// ~/.copilot), the workspace (--project, else the current directory; none for PATHs without
// --project) and the --rules-from files, the inventory's tools in mcp-config.json's order, and
// PlanRules.
func planRuleFix(ctx context.Context, in agent.RuleFixInput) (*agent.RuleFixPlan, error) {
	now, err := agent.OptionValue(in.Options, VersionOption, mcpname.CopilotLatestVersion, rulescopilot.ReleaseOf)
	if err != nil {
		return nil, err
	}
	var homes []string
	for _, p := range in.Paths {
		if fi, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("fix --rules: %w", err)
		} else if !fi.IsDir() || !IsHome(p) && filepath.Base(filepath.Clean(p)) != homeDirName {
			return nil, usage.Errorf("fix --rules --agent copilot: %s is not a Copilot CLI home (give rule files with --%s)", p, RulesFromOption)
		}
		homes = append(homes, p)
	}
	if len(homes) == 0 {
		homes = []string{Home(in.Env.Getenv, in.Env.Home)}
	}
	workspace := cmp.Or(in.Options.String(ProjectOption), in.Cwd)
	if len(in.Paths) > 0 && in.Options.String(ProjectOption) == "" {
		workspace = ""
	}
	var src Sources
	read := func(path string, parse func(string, []byte) ([]rulescopilot.Rule, []rulescopilot.Problem), given bool) {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		// A linked rule file is rewritten at its target, the link kept; as root only a link
		// whose owner owns the target is followed (owner.Resolve), and the file is read as a
		// config is (owner.ReadFile: no FIFO waited on, a regular file only).
		real, err := owner.Resolve(path)
		if le := (*owner.LinkError)(nil); errors.As(err, &le) {
			in.Problem(fmt.Errorf("%s: %w: not read, not rewritten", path, err))
			return
		}
		if err == nil {
			path = real
		}
		data, _, err := owner.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !given:
			return
		case err != nil:
			in.Problem(fmt.Errorf("%s: %w", path, err))
			return
		}
		if slices.Contains(src.Files, path) {
			return
		}
		src.Files = append(src.Files, path)
		src.Data = append(src.Data, data)
		rs, problems := parse(path, data)
		for _, p := range problems {
			in.Warn(p.String())
		}
		src.Rules = append(src.Rules, rs...)
	}
	for _, h := range homes {
		for _, l := range rulescopilot.Locations(h, "") {
			globbed(l.Glob, func(p string) { read(p, parserOf(l.Source), false) })
		}
	}
	if workspace != "" {
		for _, l := range rulescopilot.Locations("", workspace) {
			globbed(l.Glob, func(p string) { read(p, parserOf(l.Source), false) })
		}
	}
	for _, f := range in.Options.Strings(RulesFromOption) {
		read(f, func(path string, data []byte) ([]rulescopilot.Rule, []rulescopilot.Problem) {
			invs, problems := rulescopilot.Extract(path, data)
			var rs []rulescopilot.Rule
			for k, iv := range invs {
				rs = append(rs, iv.Rules...)
				src.Runs = append(src.Runs, rulescopilot.Run{Key: rulescopilot.InvocationKey(path, k), AllowAll: iv.AllowAll, Where: iv.Pos.String()})
				problems = append(problems, iv.Problems...)
			}
			return rs, problems
		}, true)
	}
	var servers []agent.Server
	for _, h := range homes {
		if ss, err := ReadServers(filepath.Join(h, MCPConfigFile), nil); err == nil {
			servers = append(servers, ss...)
		}
	}
	var order []string
	for _, s := range servers {
		if !slices.Contains(order, s.Key) {
			order = append(order, s.Key)
		}
	}
	inv, err := mcpinventory.Load(in.Inventory)
	if err != nil {
		return nil, err
	}
	src.Tools = inventoryTools(inv, order)
	m := PlanRules(now, src)
	out := &agent.RuleFixPlan{Version: now.Version, Changes: m.Changes, Edits: m.Files}
	agent.SetRuleFixReport(out, string(ID), "", src.Files)
	return out, nil
}

// Sources are the rules fix --rules --agent copilot migrates: the files read (Data parallel to
// Files), every rule found in them, the copilot command lines of the --rules-from files (Runs,
// Key set, rules not yet filled), and the configured tools in Copilot's order.
type Sources struct {
	Files []string
	Data  [][]byte
	Rules []rulescopilot.Rule
	Runs  []rulescopilot.Run
	Tools []rulescopilot.Tool
}

// Migration is a planned rule migration: one change per server(tool) rule that names a
// configured tool but no longer matches it (rewritten or held, with why), and the byte edits of
// every file with a rewrite made.
type Migration struct {
	Changes []agent.RuleChange
	Files   []agent.RuleFileEdits
}

// PlanRules plans the migration of src's server(tool) rules to now (rulescopilot.PlanRewrite
// per rule). A rule meant for no configured tool, and one that matches its tool already, is
// left out. Each change says, for a command line's rule, what happens to its tool in that run
// (its own flags and the rules of every run) under now as written and after the rewrite.
func PlanRules(now rulescopilot.Release, src Sources) Migration {
	var out Migration
	runs := rulescopilot.RunsOf(src.Rules, src.Runs, false)
	dataOf := map[string][]byte{}
	for i, f := range src.Files {
		dataOf[f] = src.Data[i]
	}
	seen := map[[2]string]int{}
	byFile := map[string]*agent.RuleFileEdits{}
	var order []string
	for i, r := range src.Rules {
		key := r.Where
		if r.Source == rulescopilot.SourceFlags {
			key = "--" + string(r.Kind)
		}
		k := [2]string{r.Pos.File, key}
		index := seen[k]
		seen[k]++
		if !r.Kind.IsPermission() || r.Err != "" || !r.HasTool || len(rulescopilot.Meant(r, src.Tools)) == 0 {
			continue
		}
		p := rulescopilot.PlanRewrite(now, r, src.Tools, dataOf[r.Pos.File])
		if p.OK {
			continue
		}
		c := agent.RuleChange{File: r.Pos.File, Line: r.Pos.Line, Column: r.Pos.Col, Scope: r.Source, Key: key, Index: index,
			Action: "held", Old: r.Text, WrittenFor: "raw tool name", Note: p.Held}
		for _, t := range rulescopilot.Meant(r, src.Tools) {
			c.Before = append(c.Before, t.Server+"/"+t.Tool)
		}
		if p.NewTool != "" {
			nr := r
			nr.Tool, nr.Text = p.NewTool, r.Server+"("+p.NewTool+")"
			c.New = nr.Text
			for _, t := range rulescopilot.Matching(now, nr, src.Tools) {
				c.After = append(c.After, t.Server+"/"+t.Tool)
			}
			if p.Edit != nil && p.Meant != nil {
				c.Action, c.Rewrite = "rewrite", true
				c.Note = runNote(now, src, runs, i, nr, *p.Meant)
				fe := byFile[r.Pos.File]
				if fe == nil {
					fe = &agent.RuleFileEdits{Path: r.Pos.File}
					byFile[r.Pos.File] = fe
					order = append(order, r.Pos.File)
				}
				fe.Edits = append(fe.Edits, store.FileEdit{At: int64(p.Edit.Span.Start), Old: p.Edit.Old, New: p.Edit.New})
				fe.Labels = append(fe.Labels, fmt.Sprintf("%s %s", key, r.Text))
				fe.Rules++
			}
		}
		out.Changes = append(out.Changes, c)
	}
	for _, f := range order {
		out.Files = append(out.Files, *byFile[f])
	}
	return out
}

// runNote says what happens to tool t under now in each run rule i belongs to (a command line
// of a --rules-from file: its flags and the rules of every run), as written and with the rule
// rewritten to nr: "in the run at ci.sh:3:1 lit/literature.search_pubmed: ran now, denied
// after the rewrite".
func runNote(now rulescopilot.Release, src Sources, runs []rulescopilot.Run, i int, nr rulescopilot.Rule, t rulescopilot.Tool) string {
	note := ""
	for _, run := range runs {
		if !slices.Contains(run.Rules, i) {
			continue
		}
		rs := make([]rulescopilot.Rule, len(run.Rules))
		for k, j := range run.Rules {
			rs[k] = src.Rules[j]
		}
		before := outcomeOf(rulescopilot.Evaluate(now, rulescopilot.Setup{Tools: src.Tools, Rules: rs, AllowAll: run.AllowAll}), t)
		rs[slices.Index(run.Rules, i)] = nr
		after := outcomeOf(rulescopilot.Evaluate(now, rulescopilot.Setup{Tools: src.Tools, Rules: rs, AllowAll: run.AllowAll}), t)
		where := "in every run"
		if run.Where != "" {
			where = "in the run at " + run.Where
		}
		if note != "" {
			note += "; "
		}
		note += fmt.Sprintf("%s %s/%s: %s now, %s after the rewrite", where, t.Server, t.Tool, before, after)
	}
	return note
}

func outcomeOf(res rulescopilot.Result, t rulescopilot.Tool) rulescopilot.Outcome {
	for _, tr := range res.Tools {
		if tr.Tool == t {
			return tr.Outcome
		}
	}
	return "unknown"
}
