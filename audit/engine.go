package audit

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/permission/rules"
	"github.com/sessionfix/sessionfix/reports"
)

// Report is one agent's rule audit (a rules.Audit) evaluated and laid out in every format the
// command writes: the pairs table (CSV), the tools table (--tools-out), the HTML page, the JSON
// document, the SARIF results and rules, the summary, and the counts --fail-on reads. Build
// makes one; the command writes it as it writes every audit.
type Report struct {
	Audit  *rules.Audit
	Result *rules.Result
	// Pairs are the visible pairs' rows (every pair with --all-pairs), lost restrictions
	// first (the agent's Order); Tools one row per tool.
	Pairs, Tools *reports.Table
	allPairs     bool
	generated    time.Time
	version      string
}

// PairColumns are the columns of the pairs table (and of the JSON pairs' members).
var PairColumns = []string{"settings_file", "scope", "key", "index", "line", "rule", "kind", "server", "tool",
	"name_now", "name_before", "now", "before", "change"}

// ToolColumns are the columns of the tools table. shared_now names the other tools the current
// point gives the same name.
var ToolColumns = []string{"server", "tool", "source", "name_now", "name_before", "decision_now", "rule_now",
	"outcome_now", "decision_before", "rule_before", "outcome_before", "note_now", "shared_now"}

// Build evaluates a (rules.Evaluate with a.Order, LostFirst when nil) and lays out the tables.
// allPairs: list every pair, not only those matching now or before; generated and version go
// into the documents' headers.
func Build(a *rules.Audit, allPairs bool, generated time.Time, version string) *Report {
	order := a.Order
	if order == nil {
		order = rules.LostFirst
	}
	r := &Report{Audit: a, Result: rules.Evaluate(a.Eval, order), allPairs: allPairs, generated: generated, version: version}
	var pairs, tools [][]string
	for _, p := range r.Result.Visible(allPairs) {
		pairs = append(pairs, r.pairRow(p))
	}
	toolCols := r.layout().ToolColumns
	for i, t := range r.Result.Tools {
		if toolCols != nil {
			tools = append(tools, r.row(toolCols, cellAt{tool: &r.Result.Tools[i]}))
			continue
		}
		tools = append(tools, []string{t.Server, t.Tool.Tool, t.Source, t.Now.Name, t.Before.Name,
			t.Now.Decision, r.ruleText(t.Now), a.Words.OfOutcome(t.Now.Outcome),
			t.Before.Decision, r.ruleText(t.Before), a.Words.OfOutcome(t.Before.Outcome), t.Now.Note, sharedText(t.Now)})
	}
	r.Pairs, r.Tools = reports.PrintableTable(r.pairColumns(), pairs), reports.PrintableTable(r.toolColumns(), tools)
	return r
}

// layout is the audit's layout (the zero Layout for the default one).
func (r *Report) layout() *rules.Layout {
	if r.Audit.Layout == nil {
		return &rules.Layout{}
	}
	return r.Audit.Layout
}

func (r *Report) pairColumns() []string {
	if l := r.layout(); l.PairColumns != nil {
		return headers(l.PairColumns)
	}
	return PairColumns
}

func (r *Report) toolColumns() []string {
	if l := r.layout(); l.ToolColumns != nil {
		return headers(l.ToolColumns)
	}
	return ToolColumns
}

func (r *Report) pairRow(p rules.Pair) []string {
	if l := r.layout(); l.PairColumns != nil {
		return r.row(l.PairColumns, r.pairAt(&p))
	}
	ru, t, w := r.Result.Rules[p.Rule], r.Result.Tools[p.Tool], r.Audit.Words
	return []string{ru.File, ru.Scope, ru.Key, strconv.Itoa(ru.Index), strconv.Itoa(ru.Line), ru.Text, ru.Kind,
		t.Server, t.Tool.Tool, t.Now.Name, t.Before.Name, w.OfMatch(p.Now), w.OfMatch(p.Before), string(p.Change)}
}

func (r *Report) ruleText(v rules.Verdict) string {
	if v.Rule < 0 || v.Rule >= len(r.Result.Rules) {
		return ""
	}
	return r.Result.Rules[v.Rule].Text
}

// sharedText is "server/tool, …" of the tools sharing v's name, with " (unreachable: X
// answers)" when another tool answers it (Verdict.Unreachable).
func sharedText(v rules.Verdict) string {
	parts := make([]string, len(v.SharedWith))
	for i, o := range v.SharedWith {
		parts[i] = o.String()
	}
	s := strings.Join(parts, ", ")
	if v.Unreachable && s != "" {
		s += " (unreachable: " + v.SharedWith[0].String() + " answers)"
	}
	return s
}

// Partial reports whether some input could not be read (exit 3 wins over findings).
func (r *Report) Partial() bool { return len(r.Audit.Problems) > 0 || r.Audit.Partial }

// JSON is the JSON document (Document, or the layout's document when the audit has one);
// redispatch is the history check's findings as JSON (nil: []).
func (r *Report) JSON(redispatch json.RawMessage) any {
	if r.Audit.Layout != nil && r.Audit.Layout.Document != nil {
		return r.layoutDocument(redispatch)
	}
	return r.Document(redispatch)
}

// Document is the JSON document of a rule audit (docs/audit.md "The shared rule-audit
// document"): lost_restrictions first, the header facts, counts, the rule files, rules, tools,
// pairs, findings, notes, errors, and the re-dispatch findings last.
type Document struct {
	LostRestrictions []DocPair          `json:"lost_restrictions"`
	Generated        string             `json:"generated"`
	Agent            string             `json:"agent"`
	Now              string             `json:"now"`
	Before           string             `json:"before"`
	Facts            map[string]string  `json:"facts,omitempty"`
	Inventory        string             `json:"inventory"`
	Counts           DocCounts          `json:"counts"`
	Settings         []reports.JSONFile `json:"settings"`
	Rules            []DocRule          `json:"rules"`
	Tools            []DocTool          `json:"tools"`
	Pairs            []DocPair          `json:"pairs"`
	Findings         []DocFinding       `json:"findings"`
	Notes            []string           `json:"notes,omitempty"`
	Errors           []string           `json:"errors"`
	// Redispatch are the history check's findings as JSON (an array, never null).
	Redispatch json.RawMessage `json:"redispatch"`
}

// DocCounts are the document's counts.
type DocCounts struct {
	Rules            int `json:"rules"`
	Tools            int `json:"tools"`
	Pairs            int `json:"pairs"`
	Lost             int `json:"lost"`
	LostRestrictions int `json:"lost_restrictions"`
	Gained           int `json:"gained"`
	Refused          int `json:"refused"`
	Changed          int `json:"changed_outcomes"`
	Findings         int `json:"findings"`
}

// DocRule is one rule as written, at its file, line and column.
type DocRule struct {
	File    string `json:"settings_file"`
	Scope   string `json:"scope"`
	Key     string `json:"key"`
	Index   int    `json:"index"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Rule    string `json:"rule"`
	Kind    string `json:"kind"`
	Effect  string `json:"effect"`
	Ignored string `json:"ignored,omitempty"`
}

// DocPair is one (rule, tool) pair with the tool's names now and before.
type DocPair struct {
	DocRule
	Server     string `json:"server"`
	Tool       string `json:"tool"`
	NameNow    string `json:"name_now"`
	NameBefore string `json:"name_before"`
	Now        string `json:"now"`
	Before     string `json:"before"`
	Change     string `json:"change"`
}

// DocVerdict is a tool's verdict at one point.
type DocVerdict struct {
	Name       string   `json:"name"`
	Decision   string   `json:"decision"`
	Rule       string   `json:"rule,omitempty"`
	RuleAt     string   `json:"rule_at,omitempty"`
	Note       string   `json:"note,omitempty"`
	Outcome    string   `json:"outcome"`
	SharedWith []string `json:"shared_with,omitempty"`
}

// DocTool is one tool with its verdicts now and before.
type DocTool struct {
	Server string     `json:"server"`
	Tool   string     `json:"tool"`
	Source string     `json:"source,omitempty"`
	Now    DocVerdict `json:"now"`
	Before DocVerdict `json:"before"`
}

// DocFinding is one of the agent's own findings.
type DocFinding struct {
	Class   string `json:"class"`
	Level   string `json:"level"`
	At      string `json:"at,omitempty"`
	Rule    string `json:"rule,omitempty"`
	Server  string `json:"server,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Message string `json:"message"`
}

func effectWord(e rules.Effect) string {
	if e == rules.Restricts {
		return "restricts"
	}
	return "grants"
}

func (r *Report) docRule(ru rules.Rule) DocRule {
	return DocRule{File: ru.File, Scope: ru.Scope, Key: ru.Key, Index: ru.Index, Line: ru.Line, Column: ru.Column,
		Rule: ru.Text, Kind: ru.Kind, Effect: effectWord(ru.Effect), Ignored: ru.Ignored}
}

func (r *Report) docPair(p rules.Pair) DocPair {
	t, w := r.Result.Tools[p.Tool], r.Audit.Words
	return DocPair{DocRule: r.docRule(r.Result.Rules[p.Rule]), Server: t.Server, Tool: t.Tool.Tool, NameNow: t.Now.Name,
		NameBefore: t.Before.Name, Now: w.OfMatch(p.Now), Before: w.OfMatch(p.Before), Change: string(p.Change)}
}

func (r *Report) docVerdict(v rules.Verdict) DocVerdict {
	d := DocVerdict{Name: v.Name, Decision: v.Decision, Note: v.Note, Outcome: r.Audit.Words.OfOutcome(v.Outcome)}
	if v.Rule >= 0 && v.Rule < len(r.Result.Rules) {
		ru := r.Result.Rules[v.Rule]
		d.Rule, d.RuleAt = ru.Text, fmt.Sprintf("%s:%d:%d", ru.File, ru.Line, ru.Column)
	}
	for _, o := range v.SharedWith {
		d.SharedWith = append(d.SharedWith, o.String())
	}
	return d
}

// at is "file:line:col" of a finding (its rule's place, else its own).
func (r *Report) at(f rules.Finding) string {
	if f.Rule >= 0 && f.Rule < len(r.Result.Rules) {
		ru := r.Result.Rules[f.Rule]
		return fmt.Sprintf("%s:%d:%d", ru.File, ru.Line, ru.Column)
	}
	if f.File == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", f.File, f.Line)
}

// Document is the JSON document; redispatch is the history check's findings as JSON (nil: []).
func (r *Report) Document(redispatch json.RawMessage) *Document {
	a, res := r.Audit, r.Result
	if redispatch == nil {
		redispatch = json.RawMessage("[]")
	}
	d := &Document{LostRestrictions: []DocPair{}, Generated: r.generated.UTC().Format(time.RFC3339), Agent: a.ID,
		Now: res.Now, Before: res.Before, Inventory: a.Inventory, Settings: []reports.JSONFile{}, Rules: []DocRule{},
		Tools: []DocTool{}, Pairs: []DocPair{}, Findings: []DocFinding{}, Notes: a.Notes, Errors: append([]string{}, a.Problems...),
		Redispatch: redispatch}
	c := res.Counts
	d.Counts = DocCounts{Rules: c.Rules, Tools: c.Tools, Pairs: c.Pairs, Lost: c.Lost, LostRestrictions: c.LostRestrictions,
		Gained: c.Gained, Refused: c.NotApplied, Changed: c.Changed, Findings: len(res.Findings)}
	if len(a.Facts) > 0 {
		d.Facts = map[string]string{}
		for _, f := range a.Facts {
			d.Facts[f.Key] = f.Value
		}
	}
	for _, f := range a.Files {
		d.Settings = append(d.Settings, reports.JSONFile{Path: f.Path, Scope: f.Scope})
	}
	for _, ru := range res.Rules {
		d.Rules = append(d.Rules, r.docRule(ru))
	}
	for _, t := range res.Tools {
		d.Tools = append(d.Tools, DocTool{Server: t.Server, Tool: t.Tool.Tool, Source: t.Source, Now: r.docVerdict(t.Now), Before: r.docVerdict(t.Before)})
	}
	for _, p := range res.LostRestrictions() {
		d.LostRestrictions = append(d.LostRestrictions, r.docPair(p))
	}
	for _, p := range res.Visible(r.allPairs) {
		d.Pairs = append(d.Pairs, r.docPair(p))
	}
	for _, f := range res.Findings {
		df := DocFinding{Class: f.Class, Level: f.Level, At: r.at(f), Message: f.Message}
		if f.Rule >= 0 && f.Rule < len(res.Rules) {
			df.Rule = res.Rules[f.Rule].Text
		}
		if f.Tool >= 0 && f.Tool < len(res.Tools) {
			df.Server, df.Tool = res.Tools[f.Tool].Server, res.Tools[f.Tool].Tool.Tool
		}
		d.Findings = append(d.Findings, df)
	}
	return d
}

// SARIFRules are the SARIF rules of a rule audit: lost, gained, refused (the ids every audit
// uses) and one per finding class met, worded with the agent's name.
func (r *Report) SARIFRules() []reports.SARIFRule {
	n := r.Audit.Name
	out := []reports.SARIFRule{
		{ID: "sessionfix/audit/lost", Name: "AuditLost", Short: "a " + n + " permission rule no longer matches a tool it matched under the earlier release",
			Full: "The rule matched the tool at the earlier point (--before) and matches nothing of it now: a deny, exclude or ask rule lost is a restriction lost (sessionfix fix --rules rewrites it where the agent has a migration), an allow rule lost a permission lost (docs/audit.md)."},
		{ID: "sessionfix/audit/gained", Name: "AuditGained", Short: "a " + n + " permission rule now matches a tool it did not match under the earlier release",
			Full: "The rule matches the tool now and did not before: it grants or restricts more than before (docs/audit.md)."},
		{ID: "sessionfix/audit/refused", Name: "AuditRefused", Short: "a " + n + " permission rule names the tool but the current release does not apply it",
			Full: "The rule names the tool and the current release does not apply it (its file is rejected or not read, the key is not read)."},
	}
	for _, t := range r.layout().SARIF {
		for i := range out[:3] {
			if out[i].ID == "sessionfix/audit/"+t.Class {
				out[i].Short, out[i].Full = t.Short, t.Full
			}
		}
	}
	seen := map[string]bool{}
	for _, f := range r.Result.Findings {
		if seen[f.Class] {
			continue
		}
		seen[f.Class] = true
		out = append(out, reports.SARIFRule{ID: "sessionfix/audit/" + f.Class, Name: reports.SARIFRuleName("audit", f.Class),
			Short: "a " + n + " rule finding: " + f.Class, Full: "An audit finding of the " + n + " rule model (docs/audit.md, the agent's page)."})
	}
	return out
}

// SARIF are the results: one per lost pair ("error"), gained pair ("warning"), pair whose rule
// the current point names but does not apply (refused, "warning"), then one per finding (its
// level). Located at the rule's file and line; fingerprints as ReadBaseline recomputes them
// from the JSON pairs (class, file, key, rule text, raw identity).
func (r *Report) SARIF() []reports.SARIFResult {
	var out []reports.SARIFResult
	for _, p := range r.Result.Pairs {
		if p.Change == permission.ChangeLost {
			out = append(out, r.pairResult("lost", "error", p))
		}
		if p.Change == permission.ChangeGained {
			out = append(out, r.pairResult("gained", "warning", p))
		}
		if p.Now == rules.NotApplied {
			out = append(out, r.pairResult("refused", "warning", p))
		}
	}
	for _, f := range r.Result.Findings {
		path, line, key, text, raw := reports.SARIFPath(f.File), int64(f.Line), "", "", ""
		if f.Rule >= 0 && f.Rule < len(r.Result.Rules) {
			ru := r.Result.Rules[f.Rule]
			path, line, key, text = reports.SARIFPath(ru.File), int64(ru.Line), ru.Key, ru.Text
		}
		if f.Tool >= 0 && f.Tool < len(r.Result.Tools) {
			t := r.Result.Tools[f.Tool]
			raw = mcpname.Raw(t.Server, t.Tool.Tool)
		}
		finding := reports.Finding{Store: f.File, Class: f.Class, Name: raw, Rule: text}
		if f.Rule >= 0 && f.Rule < len(r.Result.Rules) {
			ru := r.Result.Rules[f.Rule]
			finding.Store, finding.Site, finding.RuleKind = ru.File, ruleSite(ru.Scope, ru.Key, ru.Index, ru.Line), ru.Kind
		}
		out = append(out, reports.SARIFResult{RuleID: "sessionfix/audit/" + f.Class, Level: f.Level, Message: f.Message, Path: path, Line: line,
			Fingerprint: reports.SARIFFingerprint("audit", f.Class, path, key, text+"\x00"+f.Message, raw), Finding: finding})
	}
	return out
}

func (r *Report) pairResult(class, level string, p rules.Pair) reports.SARIFResult {
	ru, t := r.Result.Rules[p.Rule], r.Result.Tools[p.Tool]
	var msg string
	if m := r.layout().Message; m != nil {
		msg = m(class, ru, t, p)
	} else {
		msg = r.pairMessage(class, p)
	}
	path := reports.SARIFPath(ru.File)
	return reports.SARIFResult{RuleID: "sessionfix/audit/" + class, Level: level, Message: msg, Path: path, Line: int64(ru.Line),
		Fingerprint: reports.SARIFFingerprint("audit", class, path, ru.Key, ru.Text, mcpname.Raw(t.Server, t.Tool.Tool)),
		Finding:     reports.Finding{Store: ru.File, Site: ruleSite(ru.Scope, ru.Key, ru.Index, ru.Line), Class: class, Name: t.Before.Name, New: t.Now.Name, RuleKind: ru.Kind, Rule: ru.Text}}
}

// pairMessage is the default message of a pair's SARIF result.
func (r *Report) pairMessage(class string, p rules.Pair) string {
	ru, t, res, w := r.Result.Rules[p.Rule], r.Result.Tools[p.Tool], r.Result, r.Audit.Words
	var what string
	switch class {
	case "lost":
		what = fmt.Sprintf("matched it under %s (as %s) and %s under %s (as %s)", res.Before, orNone(t.Before.Name), nowWord(w, p.Now), res.Now, orNone(t.Now.Name))
	case "gained":
		what = fmt.Sprintf("did not match it under %s (as %s) and matches it under %s (as %s)", res.Before, orNone(t.Before.Name), res.Now, orNone(t.Now.Name))
	default:
		what = fmt.Sprintf("names it (as %s), but %s does not apply the rule", orNone(t.Now.Name), res.Now)
	}
	return fmt.Sprintf("%s rule %q (%s %s[%d]) %s tool %s (server %s): %s; outcome now %s, before %s.",
		ru.Kind, ru.Text, ru.Scope, ru.Key, ru.Index, class, t.Tool.Tool, t.Server, what, w.OfOutcome(t.Now.Outcome), w.OfOutcome(t.Before.Outcome))
}

// ruleSite is where a rule lies in its file, as the fleet database's site column says it:
// "user permissions.deny[0] line 4" (scope, key and index, line; the parts unknown left out).
func ruleSite(scope, key string, index, line int) string {
	var parts []string
	if scope != "" {
		parts = append(parts, scope)
	}
	if key != "" {
		if index >= 0 {
			key = fmt.Sprintf("%s[%d]", key, index)
		}
		parts = append(parts, key)
	}
	if line > 0 {
		parts = append(parts, fmt.Sprintf("line %d", line))
	}
	return strings.Join(parts, " ")
}

func nowWord(w rules.Words, m rules.Match) string {
	if m == rules.NotApplied {
		return "is " + w.OfMatch(m)
	}
	return "matches nothing of it"
}

func orNone(s string) string {
	if s == "" {
		return "no name"
	}
	return s
}

// FailCounts are the --fail-on classes' counts given SARIF's results: lost, gained, refused and
// each finding class (one per result of that rule id).
func FailCounts(results []reports.SARIFResult) map[string]int {
	out := map[string]int{}
	for _, x := range results {
		out[strings.TrimPrefix(x.RuleID, "sessionfix/audit/")]++
	}
	return out
}

// Page is the HTML report: header, counts, the lost restrictions, the pairs, the tools and the
// agent's findings.
func (r *Report) Page() *reports.HTMLPage {
	a, res := r.Audit, r.Result
	var lostRows [][]string
	for _, p := range res.LostRestrictions() {
		lostRows = append(lostRows, r.pairRow(p))
	}
	lost := reports.PrintableTable(r.pairColumns(), lostRows)
	files := make([]string, len(a.Files))
	for i, f := range a.Files {
		files[i] = f.Path + " (" + f.Scope + ")"
	}
	if len(files) == 0 {
		files = []string{"none found"}
	}
	lp := r.layout().Page
	title := cmp.Or(lp.Title, "sessionfix audit: "+a.Name+" permission rules and MCP tools")
	header := cmp.Or(lp.Header, a.Name+" "+res.Now+" now, "+res.Before+" before")
	counts := lp.Counts
	if counts == nil {
		counts = defaultCounts
	}
	page := &reports.HTMLPage{
		Title: title,
		Meta: []string{
			"Generated " + r.generated.UTC().Format(time.RFC3339) + " by sessionfix " + r.version + "; " + header,
		},
		Sections: []reports.HTMLSection{
			{ID: "lost", Title: cmp.Or(lp.LostTitle, "Lost restrictions (restricting rules that no longer match)"), Table: lost,
				Empty: cmp.Or(lp.LostEmpty, "No restricting rule lost its tool."), Paths: r.pathColumns()},
			{ID: "pairs", Title: "Rules × tools", Table: r.Pairs, Facets: pairFacets(lp.PairFacets),
				Empty: "No rule matches any tool, now or before.", Paths: r.pathColumns()},
			{ID: "tools", Title: "Tools", Table: r.Tools, Facets: present([]string{"decision_now", "outcome_now", "decision_before", "outcome_before"}, r.toolColumns()),
				Empty: "The inventory has no tools."},
		},
	}
	for _, cc := range counts {
		hc := countLabels[cc]
		hc.Value = r.cell(cc, "", cellAt{}).n
		page.Counts = append(page.Counts, hc)
	}
	for _, f := range a.Facts {
		if f.Label != "" && lp.Meta == nil {
			page.Meta = append(page.Meta, f.Label+": "+f.Value)
		}
	}
	page.Meta = append(page.Meta, lp.Meta...)
	page.Meta = append(page.Meta, cmp.Or(lp.FilesLabel, "Rule files")+": "+cmp.Or(lp.Files, strings.Join(files, ", ")), "Inventory: "+a.Inventory)
	for _, l := range a.Legend {
		page.Legend = append(page.Legend, reports.HTMLLegend{Term: l.Term, Text: l.Text, Value: l.Value})
	}
	if len(res.Findings) > 0 {
		var rows [][]string
		for _, f := range r.Document(nil).Findings {
			rows = append(rows, []string{f.Class, f.Level, f.At, f.Rule, f.Message})
		}
		ft := reports.PrintableTable([]string{"class", "level", "at", "rule", "message"}, rows)
		page.Sections = append(page.Sections, reports.HTMLSection{ID: "findings", Title: "Findings", Table: ft, Facets: []string{"class", "level"}})
	}
	for _, e := range a.Problems {
		page.Notes = append(page.Notes, "Not read: "+e)
	}
	page.Notes = append(page.Notes, a.Notes...)
	page.Notes = append(page.Notes, lp.Notes...)
	if r.allPairs {
		page.Sections[1].Title += " (every pair)"
	}
	return page
}

// pathColumns are the pairs table's columns of rule files (shown as paths).
func (r *Report) pathColumns() []string {
	l := r.layout()
	if l.PairColumns == nil {
		return []string{"settings_file"}
	}
	var out []string
	for _, f := range l.PairColumns {
		if f.Cell == rules.CellFile {
			out = append(out, f.Key)
		}
	}
	return out
}

// present are the names of want that are among cols, in want's order.
func present(want, cols []string) []string {
	var out []string
	for _, w := range want {
		if slices.Contains(cols, w) {
			out = append(out, w)
		}
	}
	return out
}

func pairFacets(f []string) []string {
	if f == nil {
		return []string{"scope", "kind", "now", "before", "change"}
	}
	return f
}

// Summary writes the summary line to w: "audit: <Name> <now> (before: <before>)<, facts>: N
// rules, M tools (inventory: X), K pairs listed: L lost (R restrictions), G gained, F
// refused; T tools with another outcome; P findings".
func (r *Report) Summary(w io.Writer) {
	a, res := r.Audit, r.Result
	c := res.Counts
	l := r.layout()
	for _, s := range l.Lead {
		fmt.Fprintln(w, s)
	}
	if l.Brief {
		fmt.Fprintf(w, "audit: %s, %s (inventory: %s), %s listed: %d lost, %d gained, %d refused\n",
			reports.Plural(c.Rules, "rule"), reports.Plural(c.Tools, "tool"), a.Inventory, reports.Plural(len(res.Visible(r.allPairs)), "pair"),
			c.Lost, c.Gained, c.NotApplied)
		return
	}
	facts := ""
	for _, f := range a.Facts {
		if f.Summary {
			facts += ", " + f.Label + " " + f.Value
		}
	}
	if l.Summary != nil {
		fmt.Fprintf(w, "audit: %s %s (before: %s)%s: %s, %s (inventory: %s), %s listed:", a.Name, res.Now, res.Before, facts,
			reports.Plural(c.Rules, "rule"), reports.Plural(c.Tools, "tool"), reports.Printable(a.Inventory), reports.Plural(len(res.Visible(r.allPairs)), "pair"))
		sep := " "
		for _, cell := range l.Summary {
			switch cell {
			case rules.CellCountLost:
				fmt.Fprintf(w, "%s%d lost (%s)", sep, c.Lost, reports.Plural(c.LostRestrictions, "restriction"))
				sep = ", "
			case rules.CellCountGained:
				fmt.Fprintf(w, "%s%d gained", sep, c.Gained)
				sep = ", "
			case rules.CellCountRefused:
				fmt.Fprintf(w, "%s%d refused", sep, c.NotApplied)
				sep = ", "
			case rules.CellCountChanged:
				fmt.Fprintf(w, "; %s with another outcome", reports.Plural(c.Changed, "tool"))
			case rules.CellCountFindings:
				fmt.Fprintf(w, "; %s", reports.Plural(len(res.Findings), "finding"))
			}
		}
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "audit: %s %s (before: %s)%s: %s, %s (inventory: %s), %s listed: %d lost (%d %s), %d gained, %d refused; %s with another outcome; %s\n",
		a.Name, res.Now, res.Before, facts, reports.Plural(c.Rules, "rule"), reports.Plural(c.Tools, "tool"), a.Inventory,
		reports.Plural(c.Pairs, "pair"), c.Lost, c.LostRestrictions, restrictionWord(c.LostRestrictions), c.Gained, c.NotApplied,
		reports.Plural(c.Changed, "tool"), reports.Plural(len(res.Findings), "finding"))
}

func restrictionWord(n int) string {
	if n == 1 {
		return "restriction"
	}
	return "restrictions"
}

// LostLines are the "LOST RESTRICTION" lines said on standard error, one per lost pair of a
// restricting rule: where the rule is, what it was meant to stop and what happens now.
func (r *Report) LostLines() []string {
	var out []string
	if r.layout().NoLostLines {
		return nil
	}
	for _, p := range r.Result.LostRestrictions() {
		ru, t := r.Result.Rules[p.Rule], r.Result.Tools[p.Tool]
		if f := r.layout().LostLine; f != nil {
			out = append(out, f(ru, t, r.Result.Now, r.Result.Before))
			continue
		}
		out = append(out, fmt.Sprintf("audit: LOST RESTRICTION: %s:%d:%d %s %q no longer matches %s (%s under %s, %s under %s)",
			ru.File, ru.Line, ru.Column, ru.Kind, ru.Text, t.ToolInfo.Tool, r.Audit.Words.OfOutcome(t.Before.Outcome), r.Result.Before,
			r.Audit.Words.OfOutcome(t.Now.Outcome), r.Result.Now))
	}
	return out
}
