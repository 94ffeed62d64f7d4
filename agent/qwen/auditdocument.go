package qwen

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/agent/qwen/settings"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/reports"
)

// Loaded is what a Qwen Code audit read, besides the evaluation: the settings and subagent
// files, the inventory and where it came from, and the inputs that could not be used.
type Loaded struct {
	Files  []*settings.File
	Merged *settings.Merged // the files merged in Qwen Code's scope order
	// AgentDirs are the subagent directories looked at; Agents the subagent files read.
	AgentDirs []string
	Agents    []*settings.Agent
	Inventory *mcpinventory.Inventory
	// InventoryFrom says where the tools came from: "file PATH", "discovered" or "inferred".
	InventoryFrom string
	// Problems are the inputs that could not be used (an error's text each; also written into
	// the report, so a saved report never looks complete when it is not).
	Problems []string
}

// Read are the paths of every file the audit read (the reports must not be written over
// them); inventory is the --inventory file ("" without).
func (l *Loaded) Read(inventory string) []string {
	read := []string{inventory}
	for _, f := range l.Files {
		read = append(read, f.Path)
	}
	for _, a := range l.Agents {
		read = append(read, a.Path)
	}
	return read
}

// FileList names the settings files read with their scopes, and the subagent files
// ("none found" without settings): for the report's header and the summary.
func (l *Loaded) FileList() string { return fileList(l.Files) + agentList(l.Agents) }

// Page is the HTML report of a Qwen Code audit: header (generated when, by which sessionfix
// version, mode, settings read, inventory), counts linking to their rows, the legend, the pairs
// and tools tables (pairs and tools as the CSV has them) and notes for what was not read.
func (r *Report) Page(l *Loaded, generated time.Time, version string, allPairs bool, pairs, tools *reports.Table) *reports.HTMLPage {
	c := r.Counts
	lostPairs := r.LostRestrictions()
	lostRows := make([][]string, len(lostPairs))
	for i, p := range lostPairs {
		lostRows[i] = r.PairRow(p)
	}
	lost := reports.PrintableTable(r.Columns(PairColumns), lostRows)
	p := &reports.HTMLPage{
		Title: "sessionfix audit: permission rules and MCP tools",
		Meta: []string{
			"Generated " + generated.UTC().Format(time.RFC3339) + " by sessionfix " + version + "; approval mode " + string(r.Mode) + auditAs(r),
			"Settings: " + l.FileList(),
			"Inventory: " + l.InventoryFrom,
		},
		// Each count links to its rows (the pairs table filtered by the facet it counts); tones
		// are those of the cells: lost red, gained green, refused orange.
		Counts: []reports.HTMLCount{
			{Label: "lost restrictions", One: "lost restriction", Value: len(lostPairs), Tone: "bad", Href: "#lost"},
			{Label: "rules", One: "rule", Value: c.Rules, Href: "#pairs"},
			{Label: "tools", One: "tool", Value: c.Tools, Href: "#tools"},
			{Label: "lost", Value: c.Lost, Tone: "bad", Href: "#pairs.change=lost"},
			{Label: "gained", Value: c.Gained, Tone: "good", Href: "#pairs.change=gained"},
			{Label: "refused", Value: c.Refused, Tone: "warn", Href: "#pairs.now=refused"},
		},
		Legend: auditLegend,
		Sections: []reports.HTMLSection{
			{ID: "lost", Title: "Lost restrictions (deny, ask, exclude and disallow rules that no longer match)", Table: lost,
				Empty: "No restricting rule lost its tool.", Paths: []string{"settings_file"}},
			{ID: "pairs", Title: "Rules × tools", Table: pairs, Facets: []string{"scope", "now", "before", "change"},
				Empty: "No rule matches any tool, now or before.", Paths: []string{"settings_file"}},
			{ID: "tools", Title: "Tools", Table: tools, Facets: []string{"decision_now", "outcome_now", "decision_before", "outcome_before"},
				Empty: "The inventory has no tools."},
		},
	}
	for _, e := range l.Problems {
		p.Notes = append(p.Notes, "Not read: "+e)
	}
	if r.Inferred() {
		p.Notes = append(p.Notes, "The inventory was inferred from settings and session history: tools never called are missing, and a legacy name may stand for a raw name it cannot restore. Use --inventory or --discover for exact lists.")
	}
	if allPairs {
		p.Sections[1].Title += " (every pair)"
	}
	return p
}

// restrictiveKinds are the rule kinds that take something away from a tool (deny, ask,
// tools.disabled, excludeTools, mcp.excluded, a subagent's disallowedTools): such a rule's
// lost pair is a restriction gone (docs/audit.md), listed first.
var restrictiveKinds = []settings.Kind{settings.KindDeny, settings.KindAsk, settings.KindDisabled,
	settings.KindExcludeTools, settings.KindMCPExcluded, settings.KindDisallowed}

// LostRestrictions are the pairs whose rule restricts (restrictiveKinds) and whose change is
// lost, in the pairs' order.
func (r *Report) LostRestrictions() []Pair {
	var out []Pair
	for _, p := range r.Pairs {
		if p.Change == ChangeLost && slices.Contains(restrictiveKinds, r.Rules[p.Rule].Kind) {
			out = append(out, p)
		}
	}
	return out
}

// auditLegend explains the columns and values of the audit page (the words of audit --help).
var auditLegend = []reports.HTMLLegend{
	{Term: "now", Text: "does the rule match the tool's name as Qwen Code registers it today (normalized, mcp__server__tool_<hash> for a name that had dots)?"},
	{Term: "before", Text: "did it match the tool's legacy name, as registered before the provider-safe rename?"},
	{Term: "scope", Text: "where the rule comes from: system-defaults, user, workspace, explicit (--settings), system, or agent (a subagent's disallowedTools)."},
	{Term: "match", Value: true, Text: "the rule applies to the tool."},
	{Term: "no", Value: true, Text: "the rule does not apply to the tool."},
	{Term: "refused", Value: true, Text: "an allow rule names the tool, but Qwen Code's ambiguity guard refuses the grant: the tool asks instead."},
	{Term: "same", Value: true, Text: "the rename changed nothing for this pair."},
	{Term: "gained", Value: true, Text: "the rule matches now and did not before: it took effect with the rename."},
	{Term: "lost", Value: true, Text: "the rule matched before and no longer does (or is refused): what it granted or blocked is gone — fix the rule."},
	{Term: "deny", Value: true, Text: "decisions and outcomes that restrict the tool (deny, block, disabled, excluded, disallowed): the rule is doing its job."},
	{Term: "allow", Value: true, Text: "the tool runs without asking (outcome ran)."},
	{Term: "ask", Value: true, Text: "the tool asks for approval first."},
}

func auditAs(rep *Report) string {
	if rep.Agent == "" {
		return ""
	}
	return "; calls made by subagent " + strconv.Quote(rep.Agent)
}

func fileList(files []*settings.File) string {
	if len(files) == 0 {
		return "none found"
	}
	parts := make([]string, len(files))
	for i, f := range files {
		parts[i] = f.Path + " (" + string(f.Scope) + ")"
	}
	return strings.Join(parts, ", ")
}

func agentList(agents []*settings.Agent) string {
	if len(agents) == 0 {
		return ""
	}
	parts := make([]string, len(agents))
	for i, a := range agents {
		parts[i] = a.Path
	}
	return "; subagents: " + strings.Join(parts, ", ")
}

// JSONReport is audit --format json (the Qwen Code audit).
type JSONReport struct {
	Generated string         `json:"generated"`
	Mode      string         `json:"mode"`
	Subagent  string         `json:"subagent,omitempty"`
	Inventory string         `json:"inventory"`
	Counts    Counts         `json:"counts"`
	Settings  []JSONSettings `json:"settings"`
	Agents    []string       `json:"agents"`
	Rules     []JSONRule     `json:"rules"`
	Shadowed  []JSONRule     `json:"shadowed,omitempty"`
	Tools     []JSONTool     `json:"tools"`
	Pairs     []JSONPair     `json:"pairs"`
	// Errors are the inputs that could not be used (settings, subagents, MCP servers).
	Errors []string `json:"errors"`
}

// JSONPair has the columns of the pairs table (PairColumns, plus inventory when inferred):
// reports.JSONPair, the pair row every audit's JSON document shares (ReadBaseline reads it).
type JSONPair = reports.JSONPair

// JSONSettings is one settings (or rule) file read, with its scope (reports.JSONFile, shared
// with the agents' audit documents).
type JSONSettings = reports.JSONFile

// JSONRule is one rule as written, located at its file, line and column (1-based).
type JSONRule struct {
	File    string `json:"settings_file"`
	Scope   string `json:"scope"`
	Key     string `json:"key"`
	Index   int    `json:"index"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Rule    string `json:"rule"`
	Kind    string `json:"kind"`
	Server  string `json:"server,omitempty"`
	Ignored string `json:"ignored,omitempty"`
}

// JSONVerdict is a tool's decision now or before: the rule that decided (its text and
// file:line:col), the allow rules the registry guard refused, and the outcome.
type JSONVerdict struct {
	Decision string   `json:"decision"`
	Rule     string   `json:"rule,omitempty"`
	RuleAt   string   `json:"rule_at,omitempty"`
	Note     string   `json:"note,omitempty"`
	Refused  []string `json:"refused,omitempty"`
	Outcome  string   `json:"outcome"`
}

// JSONTool is one tool of the inventory with its names and verdicts now and before.
type JSONTool struct {
	Server            string      `json:"server"`
	Tool              string      `json:"tool"`
	Registered        string      `json:"registered_name"`
	Legacy            string      `json:"legacy_name"`
	PermissionAliases []string    `json:"permission_aliases"`
	DisabledAliases   []string    `json:"disabled_aliases"`
	Trusted           bool        `json:"trusted"`
	AgentLocal        bool        `json:"agent_local,omitempty"`
	Inventory         string      `json:"inventory"`
	Now               JSONVerdict `json:"now"`
	Before            JSONVerdict `json:"before"`
}

func ruleJSON(r settings.Rule) JSONRule {
	return JSONRule{File: r.File, Scope: string(r.Scope), Key: r.Key, Index: r.Index, Line: r.Line, Column: r.Column,
		Rule: r.Literal, Kind: string(r.Kind), Server: r.Server, Ignored: r.Ignored}
}

// JSON is the audit --format json document: the pairs listed are VisiblePairs(allPairs).
func (r *Report) JSON(l *Loaded, generated time.Time, allPairs bool) *JSONReport {
	out := &JSONReport{Generated: generated.UTC().Format(time.RFC3339), Mode: string(r.Mode), Subagent: r.Agent,
		Inventory: l.InventoryFrom, Counts: r.Counts, Settings: []JSONSettings{}, Agents: []string{}, Rules: []JSONRule{},
		Tools: []JSONTool{}, Pairs: []JSONPair{}, Errors: append([]string{}, l.Problems...)}
	out.Counts.Pairs = len(r.VisiblePairs(allPairs))
	for _, f := range l.Files {
		out.Settings = append(out.Settings, JSONSettings{Path: f.Path, Scope: string(f.Scope)})
	}
	for _, a := range l.Agents {
		out.Agents = append(out.Agents, a.Path)
	}
	for _, ru := range r.Rules {
		out.Rules = append(out.Rules, ruleJSON(ru))
	}
	for _, ru := range r.Shadowed {
		out.Shadowed = append(out.Shadowed, ruleJSON(ru))
	}
	verdict := func(v Verdict) JSONVerdict {
		j := JSONVerdict{Decision: string(v.Decision), Note: v.Note, Outcome: string(v.Outcome)}
		if v.Rule >= 0 {
			ru := r.Rules[v.Rule]
			j.Rule, j.RuleAt = ru.Literal, ru.Origin.String()
		}
		for _, i := range v.Refused {
			j.Refused = append(j.Refused, r.Rules[i].Literal)
		}
		return j
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, JSONTool{Server: t.Identity.Server, Tool: t.Identity.Tool, Registered: t.Name, Legacy: t.Legacy,
			PermissionAliases: t.PermissionAliases, DisabledAliases: t.DisabledToolAliases, Trusted: t.Trusted,
			AgentLocal: t.AgentLocal, Inventory: string(t.Source), Now: verdict(t.Now), Before: verdict(t.Before)})
	}
	for _, p := range r.VisiblePairs(allPairs) {
		ru, t := r.Rules[p.Rule], r.Tools[p.Tool]
		jp := JSONPair{File: ru.File, Scope: string(ru.Scope), Key: ru.Key, Index: ru.Index, Rule: ru.Literal,
			Server: t.Identity.Server, Tool: t.Identity.Tool, Registered: t.Name, Now: string(p.Now), Before: string(p.Before),
			Change: string(p.Change)}
		if r.Inferred() {
			jp.Inventory = string(t.Source)
		}
		out.Pairs = append(out.Pairs, jp)
	}
	return out
}
