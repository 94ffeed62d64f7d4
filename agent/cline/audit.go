package cline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/naming"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/mcpname"
	permcline "github.com/sessionfix/sessionfix/permission/cline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
)

// Cline's audit (issue 27 item 3; sessionfix audit --agent cline): the autoApprove lists of
// settings/cline_mcp_settings.json against the generation installed in each data directory
// (Generation: 3 once 3.x wrote sessions/). Under 3.x every tool's outcome is given before
// (2.x, interactive: the list honoured) and after (3.x with the CLI's default --auto-approve,
// and in ACP mode), from permission/cline; each tool that now runs unasked where 2.x asked
// (or did not offer it) is a "gained" finding, listed first, and so is each server whose list
// 3.x drops (any tool not listed, including tools the audit does not know). The orphaned 2.x
// tasks of a 3.x install are listed (count, newest date), never moved or converted.
//
// The tools: --inventory or --discover (the servers of the settings), then every tool the
// 2.x tasks of the directory called (their server read from the result text), then the
// autoApprove entries. The shared rule-audit engine is not used here: this audit has no rule
// matching of its own, only approval lists (permission/cline), so it writes its report with
// package reports directly.

// Audit is Cline's rule audit.
var Audit = &agent.Audit{Reads: "Cline MCP settings: autoApprove", Run: runAudit, Description: auditDescription,
	Home: func(env agent.Env) string { return DataDir(env.Getenv, env.Home) }}

const auditDescription = `

CLINE (--agent cline): reads settings/cline_mcp_settings.json of each Cline data directory
(PATH, else ~/.cline/data or $CLINE_DATA_DIR and the VS Code extension's globalStorage/
saoudrizwan.claude-dev) and says, per MCP tool, what becomes of its calls under the Cline
generation installed there: Cline 2.x honours each server's autoApprove list (raw tool names;
interactive use), Cline 3.x drops the list, and with the CLI's default --auto-approve every MCP
tool runs unasked (ACP mode asks for all). A tool that now runs unasked where 2.x asked, or did
not offer it, is a "gained" finding (first in the report; --fail-on gained exits 5). Tools come
from --inventory or --discover, the 2.x tasks' calls and the autoApprove lists. The 2.x tasks a
3.x install no longer reads are listed (count, newest date), never moved.`

// Row is one line of the Cline audit: a tool's outcome before and after, or an orphaned task
// list.
type Row struct {
	// Finding is "gained", "same", "orphaned" or "not-offered".
	Finding string `json:"finding"`
	Dir     string `json:"dir"`
	Server  string `json:"server,omitempty"`
	// Tool is the raw tool ("*" for every tool the server does not list).
	Tool   string `json:"tool,omitempty"`
	Listed bool   `json:"auto_approve_listed"`
	// Name2 is the 2.x name ("" when 2.x does not offer the tool; its uid is a placeholder),
	// Name3 the 3.x name.
	Name2 string `json:"name_2x,omitempty"`
	Name3 string `json:"name_3x,omitempty"`
	// Before is the outcome under 2.x (interactive), After under the installed generation's
	// default, ACP under 3.x in ACP mode.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	ACP    string `json:"after_acp,omitempty"`
	// Source says where the tool was known from.
	Source string `json:"source,omitempty"`
	Reason string `json:"reason"`
}

// DirAudit is the audit of one data directory.
type DirAudit struct {
	Dir        string   `json:"dir"`
	Generation int      `json:"generation"`
	Settings   string   `json:"settings"`
	Orphans    *Orphans `json:"orphans,omitempty"`
	Rows       []Row    `json:"rows"`
}

// Report is the Cline audit document (--format json).
type Report struct {
	Agent      string              `json:"agent"`
	Generated  string              `json:"generated"`
	Version    string              `json:"sessionfix_version"`
	Dirs       []DirAudit          `json:"dirs"`
	Gained     int                 `json:"gained"`
	Orphaned   int                 `json:"orphaned_tasks"`
	Redispatch []naming.Redispatch `json:"redispatch"`
}

func runAudit(ctx context.Context, in agent.AuditInput) (*agent.AuditResult, error) {
	for _, f := range []struct {
		name string
		set  bool
	}{{"settings", len(in.Settings) > 0}, {"project", in.Project != ""}, {"agents", len(in.Agents) > 0}, {"history", len(in.History) > 0},
		{"subagent", in.Subagent != ""}, {"mode", in.ModeSet}, {"all-pairs", in.AllPairs}} {
		if f.set {
			return nil, usage.Errorf("--%s: audit --agent cline does not take it (it reads settings/cline_mcp_settings.json of each data directory: give the directory as PATH)", f.name)
		}
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if err := in.Baseline(); err != nil {
		return nil, err
	}
	dirs := in.Paths
	if len(dirs) == 0 {
		dirs = Roots(in.Engine.Env)
	}
	var inv []agent.Tool
	invSource := ""
	if in.Inventory != "" {
		f, err := mcpinventory.Load(in.Inventory)
		if err != nil {
			return nil, err
		}
		for _, k := range f.Keys() {
			for _, t := range f.Servers[k].Tools {
				inv = append(inv, agent.Tool{Server: k, Tool: t.Name})
			}
		}
		invSource = "inventory " + in.Inventory
	}
	var read []string
	partial := false
	problem := func(path, format string, args ...any) {
		fmt.Fprintf(in.Err, "%s: error: %s\n", path, fmt.Sprintf(format, args...))
		partial = true
	}
	rep := &Report{Agent: string(ID), Generated: in.Now.UTC().Format("2006-01-02T15:04:05Z"), Version: in.Version}
	for _, dir := range dirs {
		if !isDir(dir) {
			if len(in.Paths) == 0 && len(dirs) == 1 {
				what, tried, hint := RootsTried(in.Engine.Env)
				return nil, fmt.Errorf("no %s found: tried %s (pass a PATH, or %s)", what, tried, hint)
			}
			problem(dir, "not a Cline data directory")
			continue
		}
		da := DirAudit{Dir: dir, Generation: Generation(dir), Settings: SettingsPath(dir)}
		set, servers, ok, err := ReadSettings(SettingsPath(dir), in.Engine.Vars)
		switch {
		case err != nil:
			problem(SettingsPath(dir), "Cline MCP settings not read: %v", err)
			continue
		case !ok:
			problem(dir, "no settings/%s: nothing to audit", MCPSettingsFile)
			continue
		}
		read = append(read, SettingsPath(dir))
		tools := slices.Clone(inv)
		source := map[agent.Tool]string{}
		for _, t := range inv {
			source[t] = invSource
		}
		if in.Discover && in.Engine.Discover != nil && len(servers) > 0 {
			found, serverErrs, err := in.Engine.Discover(ctx, servers)
			if err != nil {
				return nil, err
			}
			for _, e := range serverErrs {
				problem(SettingsPath(dir), "--discover: %v", e)
			}
			for _, t := range found {
				if !slices.Contains(tools, t) {
					tools = append(tools, t)
					source[t] = "--discover"
				}
			}
		}
		for _, t := range HistoryTools(ctx, dir, func(path string, err error) { problem(path, "%v", err) }) {
			if !slices.Contains(tools, t.Tool) {
				tools = append(tools, t.Tool)
				source[t.Tool] = t.Source
			}
		}
		da.Rows = auditRows(dir, set, tools, source, da.Generation)
		if o, err := FindOrphans(dir); err != nil {
			problem(dir, "Cline 2.x tasks not listed: %v", err)
		} else if o != nil {
			da.Orphans = o
			rep.Orphaned += len(o.Tasks)
			da.Rows = append(da.Rows, Row{Finding: "orphaned", Dir: dir,
				Reason: fmt.Sprintf("%s (tasks/%s; newest %s) that the installed Cline 3.x never reads (no migration; \"Resource not found\" on load): listed, never moved or converted; Cline 2.x or the VS Code extension still opens them",
					reports.Plural(len(o.Tasks), "Cline 2.x task"), taskList(o.Tasks), o.Newest.UTC().Format("2006-01-02"))})
		}
		for _, r := range da.Rows {
			if r.Finding == "gained" {
				rep.Gained++
			}
		}
		rep.Dirs = append(rep.Dirs, da)
	}
	return result(rep, read, func() bool { return partial }), nil
}

// HistoryTool is a raw tool a 2.x task called, and where that was read.
type HistoryTool struct {
	Tool   agent.Tool
	Source string
}

// HistoryTools are the raw tools the 2.x tasks of a data directory called (native-era
// tool_use names whose server a result text names), in task and call order, once each. A
// task that cannot be read is reported to bad.
func HistoryTools(ctx context.Context, dir string, bad func(path string, err error)) []HistoryTool {
	ents, err := os.ReadDir(dir + "/" + TasksDir)
	if err != nil {
		return nil
	}
	var out []HistoryTool
	for _, e := range ents {
		path := dir + "/" + TasksDir + "/" + e.Name() + "/" + TaskHistoryFile
		if !isFile(path) {
			continue
		}
		snap, err := jsonl.Open(path, Task).Scan(ctx, store.ScanOptions{})
		if err != nil {
			bad(path, err)
			continue
		}
		for _, s := range snap.Sites {
			_, tool, ok := mcpname.Cline2Split(s.Name)
			if !ok || s.Server == "" {
				continue
			}
			t := agent.Tool{Server: s.Server, Tool: tool}
			if !slices.ContainsFunc(out, func(h HistoryTool) bool { return h.Tool == t }) {
				out = append(out, HistoryTool{Tool: t, Source: fmt.Sprintf("called in tasks/%s (line %d)", e.Name(), s.Loc.Line)})
			}
		}
	}
	return out
}

// auditRows are the rows of one data directory: the gained ones first (in tool order), then the
// others.
func auditRows(dir string, set permcline.Settings, tools []agent.Tool, source map[agent.Tool]string, gen int) []Row {
	ptools := make([]permcline.Tool, len(tools))
	for i, t := range tools {
		ptools[i] = permcline.Tool{Server: t.Server, Tool: t.Tool}
	}
	before, after := permcline.Gen2Interactive, permcline.Gen2Interactive
	if gen == 3 {
		after = permcline.Gen3AutoApprove
	}
	outs := permcline.Compare(set, ptools, before, after)
	acp := permcline.Compare(set, ptools, before, permcline.Gen3ACP)
	reasons := map[permcline.Tool]string{}
	for _, f := range permcline.Findings(outs, before, after) {
		reasons[f.Tool] = f.Reason
	}
	var gained, rest []Row
	for i, o := range outs {
		r := Row{Finding: "same", Dir: dir, Server: o.Tool.Server, Tool: o.Tool.Tool, Listed: o.Listed, Name2: o.Name2, Name3: o.Name3,
			Before: string(o.Before), After: string(o.After), Source: source[agent.Tool{Server: o.Tool.Server, Tool: o.Tool.Tool}]}
		if gen == 3 {
			r.ACP = string(acp[i].After)
		}
		if r.Source == "" && o.Unknown {
			r.Source = "autoApprove"
		}
		if r.Name2 == "" {
			r.Reason = fmt.Sprintf("Cline 2.x does not offer it (its name would exceed %d)", mcpname.ClineMaxLength)
		}
		switch {
		case o.Gained:
			r.Finding, r.Reason = "gained", reasons[o.Tool]
			gained = append(gained, r)
			continue
		case o.Before == permcline.Approved && o.After == permcline.Approved && gen == 3:
			r.Reason = "in autoApprove of " + o.Tool.Server + ": approved unasked under 2.x; 3.x drops the list, --auto-approve still runs it unasked"
		case o.Before == o.After:
			r.Reason = strings.TrimPrefix(r.Reason+"; unchanged", "; ")
		}
		rest = append(rest, r)
	}
	if gen == 3 {
		// Every server's list is dropped: any tool it does not list (known here or not) now
		// runs unasked where 2.x asked.
		var srv []Row
		for _, s := range set.Servers {
			if s.Disabled {
				continue
			}
			listed := "its autoApprove list is empty"
			if len(s.AutoApprove) > 0 {
				listed = "it lists only " + strings.Join(s.AutoApprove, ", ")
			}
			srv = append(srv, Row{Finding: "gained", Dir: dir, Server: s.Key, Tool: "*", Before: string(permcline.Asked), After: string(permcline.Approved), ACP: string(permcline.Asked),
				Source: "autoApprove", Reason: fmt.Sprintf("Cline 3.x drops autoApprove of %s (%s): with the CLI's default --auto-approve every tool of the server runs unasked, where Cline 2.x asked for every tool not listed", s.Key, listed)})
		}
		gained = append(srv, gained...)
	}
	return append(gained, rest...)
}

var auditColumns = []string{"finding", "dir", "server", "tool", "auto_approve_listed", "name_2x", "name_3x", "before_2x", "after", "after_acp", "source", "reason"}

func (r Row) cells() []string {
	listed := ""
	if r.Tool != "" && r.Tool != "*" {
		listed = fmt.Sprint(r.Listed)
	}
	return []string{r.Finding, r.Dir, r.Server, r.Tool, listed, r.Name2, r.Name3, r.Before, r.After, r.ACP, r.Source, r.Reason}
}

// sarifRules are the Cline audit's SARIF rules.
var sarifRules = []reports.SARIFRule{
	{ID: "sessionfix/audit/gained", Name: "Gained", Short: "An MCP tool now runs without asking",
		Full: "Cline 3.x drops the autoApprove lists of cline_mcp_settings.json; with its default --auto-approve every MCP tool runs unasked."},
	{ID: "sessionfix/audit/orphaned", Name: "Orphaned", Short: "Cline 2.x tasks the installed Cline 3.x never reads",
		Full: "Cline 3.x keeps sessions in sessions/ and never reads the 2.x tasks/ folder."},
}

// result is the audit's result as the command's shared tail takes it.
func result(rep *Report, read []string, partial func() bool) *agent.AuditResult {
	pairs := &reports.Table{Columns: auditColumns}
	tools := &reports.Table{Columns: auditColumns}
	var results []reports.SARIFResult
	for _, d := range rep.Dirs {
		for _, r := range d.Rows {
			pairs.Add(r.cells()...)
			if r.Tool != "" && r.Tool != "*" {
				tools.Add(r.cells()...)
			}
			if r.Finding != "gained" && r.Finding != "orphaned" {
				continue
			}
			level := "error"
			if r.Finding == "orphaned" {
				level = "note"
			}
			msg := r.Reason
			if r.Tool != "" {
				msg = fmt.Sprintf("%s/%s: %s", r.Server, r.Tool, r.Reason)
			}
			results = append(results, reports.SARIFResult{RuleID: "sessionfix/audit/" + r.Finding, Message: msg, Path: reports.SARIFPath(d.Settings),
				Level: level, Fingerprint: reports.SARIFFingerprint("cline", r.Finding, r.Server, r.Tool),
				Finding: reports.Finding{Store: d.Settings, Class: r.Finding, Name: strings.Trim(r.Server+"/"+r.Tool, "/")}})
		}
	}
	return &agent.AuditResult{
		Pairs: pairs, Tools: tools,
		Page: func() *reports.HTMLPage {
			return &reports.HTMLPage{Title: "Cline MCP approval audit", Meta: []string{"generated " + rep.Generated + " by sessionfix " + rep.Version},
				Counts:   []reports.HTMLCount{{Label: "gained", Value: rep.Gained, Tone: "bad"}, {Label: "orphaned 2.x tasks", Value: rep.Orphaned, Tone: "warn"}},
				Sections: []reports.HTMLSection{{ID: "tools", Title: "MCP tools: outcome before (Cline 2.x) and after", Table: pairs, Facets: []string{"finding", "server", "after"}, Empty: "no MCP tool known"}}}
		},
		Doc: func(rd []naming.Redispatch) json.Marshaler {
			r := *rep
			r.Redispatch = rd
			return reports.Document(&r)
		},
		SARIF: func() []reports.SARIFResult { return results },
		Rules: sarifRules,
		Read:  read,
		Summary: func(w io.Writer) {
			for _, d := range rep.Dirs {
				tools, servers := 0, 0
				for _, r := range d.Rows {
					switch {
					case r.Finding == "gained" && r.Tool == "*":
						servers++
					case r.Finding == "gained":
						tools++
					}
				}
				fmt.Fprintf(w, "audit: %s (Cline %d.x): %s gained (run unasked where Cline 2.x asked or did not offer them)", d.Dir, d.Generation, reports.Plural(tools, "tool"))
				if servers > 0 {
					fmt.Fprintf(w, "; %s dropped by Cline 3.x (every tool of %s runs unasked)", reports.Plural(servers, "autoApprove list"), map[bool]string{true: "that server", false: "those servers"}[servers == 1])
				}
				if d.Orphans != nil {
					fmt.Fprintf(w, "; %s orphaned (newest %s), never moved", reports.Plural(len(d.Orphans.Tasks), "2.x task"), d.Orphans.Newest.UTC().Format("2006-01-02"))
				}
				fmt.Fprintln(w)
			}
		},
		FailCounts: func(rs []reports.SARIFResult) map[string]int {
			m := map[string]int{}
			for _, r := range rs {
				m[strings.TrimPrefix(r.RuleID, "sessionfix/audit/")]++
			}
			return m
		},
		Partial: partial,
	}
}

// taskList names up to the 5 newest tasks ("a, tasks/b and 3 more"; ids sort by time).
func taskList(ids []string) string {
	const most = 5
	if len(ids) <= most {
		return strings.Join(ids, ", tasks/")
	}
	return strings.Join(ids[len(ids)-most:], ", tasks/") + fmt.Sprintf(" and %d older", len(ids)-most)
}
