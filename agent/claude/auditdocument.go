package claude

import (
	"fmt"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/reports"
)

// OrNone is s, or "(none)" when empty.
func OrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// TrustWord is "trusted" or "not trusted".
func TrustWord(t bool) string {
	if t {
		return "trusted"
	}
	return "not trusted"
}

func claudeFileList(files []*RuleFile) string {
	if len(files) == 0 {
		return "none found"
	}
	parts := make([]string, len(files))
	for i, f := range files {
		parts[i] = f.Path + " (" + string(f.Scope) + ")"
	}
	return strings.Join(parts, ", ")
}

// Page is the HTML report of a Claude Code audit: the lost restrictions first, then the pairs
// and tools tables, with the header, counts and legend.
func (r *ClaudeReport) Page(l *ClaudeLoaded, generated time.Time, version string, allPairs bool, pairs, tools *reports.Table) *reports.HTMLPage {
	c := r.Counts
	lost := reports.PrintableTable(ClaudePairColumns, nil)
	for _, p := range r.LostRestrictions() {
		row := r.PairRow(p)
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = reports.Printable(v)
		}
		lost.Add(cells...)
	}
	page := &reports.HTMLPage{
		Title: "sessionfix audit: Claude Code permission rules and MCP tools",
		Meta: []string{
			"Generated " + generated.UTC().Format(time.RFC3339) + " by sessionfix " + version + "; Claude Code " + r.Now.String() + " now, " + r.Before.String() + " before",
			"Project: " + OrNone(l.Project) + " (" + TrustWord(r.Trusted) + ")",
			"Rule files: " + claudeFileList(l.Files),
			"Inventory: " + l.InventoryFrom,
		},
		Counts: []reports.HTMLCount{
			{Label: "lost restrictions", One: "lost restriction", Value: c.LostRestrictions, Tone: "bad", Href: "#lost"},
			{Label: "rules", One: "rule", Value: c.Rules, Href: "#pairs"},
			{Label: "tools", One: "tool", Value: c.Tools, Href: "#tools"},
			{Label: "lost", Value: c.Lost, Tone: "bad", Href: "#pairs.change=lost"},
			{Label: "gained", Value: c.Gained, Tone: "good", Href: "#pairs.change=gained"},
		},
		Legend: claudeAuditLegend,
		Sections: []reports.HTMLSection{
			{ID: "lost", Title: "Lost restrictions (deny and ask rules that no longer match)", Table: lost,
				Empty: "No deny or ask rule lost its tool.", Paths: []string{"settings_file"}},
			{ID: "pairs", Title: "Rules × tools", Table: pairs, Facets: []string{"scope", "kind", "now", "before", "change"},
				Empty: "No rule matches any tool, now or before.", Paths: []string{"settings_file"}},
			{ID: "tools", Title: "Tools", Table: tools, Facets: []string{"decision_now", "outcome_now", "decision_before", "outcome_before"},
				Empty: "The inventory has no tools."},
		},
	}
	for _, e := range l.Problems {
		page.Notes = append(page.Notes, "Not read: "+e)
	}
	page.Notes = append(page.Notes, l.Notes...)
	if allPairs {
		page.Sections[1].Title += " (every pair)"
	}
	return page
}

var claudeAuditLegend = []reports.HTMLLegend{
	{Term: "now", Text: "does the rule match the tool as the current release (--claude-version) names it and matches rules?"},
	{Term: "before", Text: "did it match under the earlier release (--before), with that release's names and matching?"},
	{Term: "match", Value: true, Text: "the rule names the tool and the release applies it."},
	{Term: "ignored", Value: true, Text: "the rule names the tool but the release does not apply it (an allow rule of an untrusted project's .claude/settings.json in 2.1.332; an ask rule in 1.0.51, which had none)."},
	{Term: "no", Value: true, Text: "the rule does not name the tool."},
	{Term: "lost", Value: true, Text: "the rule matched before and no longer does: for deny and ask, a restriction is gone — fix the rule (sessionfix fix --rules)."},
	{Term: "gained", Value: true, Text: "the rule matches now and did not before."},
	{Term: "not offered", Value: true, Text: "a deny rule removed the tool from the list sent to the model (from 2.1.90)."},
	{Term: "block", Value: true, Text: "the tool is offered and its calls are denied."},
	{Term: "ask", Value: true, Text: "the tool asks for approval first (refused in claude -p)."},
	{Term: "ran", Value: true, Text: "the tool runs without asking."},
}

// ClaudeJSONReport is audit --agent claude --format json. lost_restrictions comes first.
type ClaudeJSONReport struct {
	LostRestrictions []ClaudeJSONPair `json:"lost_restrictions"`
	Generated        string           `json:"generated"`
	Agent            string           `json:"agent"`
	Now              string           `json:"claude_version"`
	Before           string           `json:"before"`
	SessionVersions  []string         `json:"session_versions,omitempty"`
	Project          string           `json:"project"`
	Trusted          bool             `json:"trusted"`
	Inventory        string           `json:"inventory"`
	// Incomplete are MCP server keys known without tools (not audited).
	Incomplete []string `json:"incomplete_servers,omitempty"`
	// UnknownNames are MCP names stored in the sessions that no listed tool has (not audited).
	UnknownNames []string           `json:"unknown_session_names,omitempty"`
	Counts       ClaudeCounts       `json:"counts"`
	Settings     []reports.JSONFile `json:"settings"`
	Rules        []ClaudeJSONRule   `json:"rules"`
	Tools        []ClaudeJSONTool   `json:"tools"`
	Pairs        []ClaudeJSONPair   `json:"pairs"`
	Notes        []string           `json:"notes,omitempty"`
	Errors       []string           `json:"errors"`
}

// ClaudeJSONRule is one Claude Code rule as written, at its file, line and column.
type ClaudeJSONRule struct {
	File   string `json:"settings_file"`
	Scope  string `json:"scope"`
	Key    string `json:"key"`
	Index  int    `json:"index"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Rule   string `json:"rule"`
	Kind   string `json:"kind"`
}

// ClaudeJSONPair is one (rule, tool) pair with the tool's names under both releases.
type ClaudeJSONPair struct {
	ClaudeJSONRule
	Server     string `json:"server"`
	Tool       string `json:"tool"`
	NameNow    string `json:"name_now"`
	NameBefore string `json:"name_before"`
	Now        string `json:"now"`
	Before     string `json:"before"`
	Change     string `json:"change"`
}

// ClaudeJSONVerdict is a tool's decision under one release.
type ClaudeJSONVerdict struct {
	Name        string               `json:"name"`
	Decision    string               `json:"decision"`
	Rule        string               `json:"rule,omitempty"`
	RuleAt      string               `json:"rule_at,omitempty"`
	Outcome     string               `json:"outcome"`
	SharedWith  []mcpname.ClaudeTool `json:"shared_with,omitempty"`
	Unreachable bool                 `json:"unreachable,omitempty"`
}

// ClaudeJSONTool is one tool with its verdicts now and before.
type ClaudeJSONTool struct {
	Server string            `json:"server"`
	Tool   string            `json:"tool"`
	Now    ClaudeJSONVerdict `json:"now"`
	Before ClaudeJSONVerdict `json:"before"`
}

// JSON is the audit --agent claude --format json document (pairs: VisiblePairs(allPairs)).
func (r *ClaudeReport) JSON(l *ClaudeLoaded, generated time.Time, allPairs bool) *ClaudeJSONReport {
	out := &ClaudeJSONReport{LostRestrictions: []ClaudeJSONPair{}, Generated: generated.UTC().Format(time.RFC3339), Agent: "claude",
		Now: r.Now.String(), Before: r.Before.String(), SessionVersions: l.Versions, Project: l.Project, Trusted: r.Trusted,
		Inventory: l.InventoryFrom, Incomplete: l.Incomplete, UnknownNames: l.Unknown, Counts: r.Counts, Settings: []reports.JSONFile{}, Rules: []ClaudeJSONRule{}, Tools: []ClaudeJSONTool{},
		Pairs: []ClaudeJSONPair{}, Notes: l.Notes, Errors: append([]string{}, l.Problems...)}
	out.Counts.Pairs = len(r.VisiblePairs(allPairs))
	for _, f := range l.Files {
		out.Settings = append(out.Settings, reports.JSONFile{Path: f.Path, Scope: string(f.Scope)})
	}
	rule := func(ru ClaudeRuleEntry) ClaudeJSONRule {
		return ClaudeJSONRule{File: ru.File, Scope: string(ru.Scope), Key: ru.Key, Index: ru.Index, Line: ru.Line, Column: ru.Column,
			Rule: ru.Text, Kind: string(ru.Kind)}
	}
	for _, ru := range r.Rules {
		out.Rules = append(out.Rules, rule(ru))
	}
	verdict := func(v ClaudeVerdict) ClaudeJSONVerdict {
		j := ClaudeJSONVerdict{Name: v.Name, Decision: string(v.Decision), Outcome: string(v.Outcome), SharedWith: v.SharedWith, Unreachable: v.Unreachable}
		if v.Rule >= 0 {
			ru := r.Rules[v.Rule]
			j.Rule, j.RuleAt = ru.Text, fmt.Sprintf("%s:%d:%d", ru.File, ru.Line, ru.Column)
		}
		return j
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, ClaudeJSONTool{Server: t.Server, Tool: t.Tool, Now: verdict(t.Now), Before: verdict(t.Before)})
	}
	pair := func(p ClaudePair) ClaudeJSONPair {
		t := r.Tools[p.Tool]
		return ClaudeJSONPair{ClaudeJSONRule: rule(r.Rules[p.Rule]), Server: t.Server, Tool: t.Tool, NameNow: t.Now.Name,
			NameBefore: t.Before.Name, Now: string(p.Now), Before: string(p.Before), Change: string(p.Change)}
	}
	for _, p := range r.LostRestrictions() {
		out.LostRestrictions = append(out.LostRestrictions, pair(p))
	}
	for _, p := range r.VisiblePairs(allPairs) {
		out.Pairs = append(out.Pairs, pair(p))
	}
	return out
}
