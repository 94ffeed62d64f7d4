package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/sessionfix/sessionfix/check"
	"github.com/sessionfix/sessionfix/reports"
)

// RedispatchCounts counts findings by class: redispatch, ambiguous (sites: each finding's Count).
func RedispatchCounts(rs []check.Redispatch) (redispatch, ambiguous int) {
	for _, r := range rs {
		if r.Class == "ambiguous" {
			ambiguous += r.Count
		} else {
			redispatch += r.Count
		}
	}
	return redispatch, ambiguous
}

// RedispatchLine is the closing sentence of scan, fix and check when stored calls reach another
// tool today, or several ("" when none): "2 stored calls now reach another tool (redispatch)
// and 1 is ambiguous by the agent's own lookup: never rewritten into another tool (see above)".
func RedispatchLine(rs []check.Redispatch) string {
	n, m := RedispatchCounts(rs)
	if n+m == 0 {
		return ""
	}
	var parts []string
	if n > 0 {
		parts = append(parts, fmt.Sprintf("%s now %s another tool (redispatch)", reports.Plural(n, "stored call"), map[bool]string{true: "reaches", false: "reach"}[n == 1]))
	}
	if m > 0 {
		verb := "are"
		if m == 1 {
			verb = "is"
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s ambiguous", m, verb))
		} else {
			parts = append(parts, fmt.Sprintf("%s %s ambiguous", reports.Plural(m, "stored call"), verb))
		}
	}
	return strings.Join(parts, " and ") + " by the agent's own lookup today: never rewritten into another tool (see \"stored calls that reach another tool today\")"
}

// WriteRedispatchText prints the findings, one block each: class, store:line, stored name, the
// tool called and what it reaches, the lookup rule and what fix does. Nothing when none.
func WriteRedispatchText(w io.Writer, rs []check.Redispatch) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nstored calls that reach another tool today (the agent's own lookup over the current tools):\n")
	for _, r := range rs {
		fmt.Fprintf(w, "  %s  %s:%s  %s%s\n", r.Class, r.Store, where(r), storedText(r), countText(r.Count))
		fmt.Fprintf(w, "      %s\n", reachLine(r))
		fmt.Fprintf(w, "      rule: %s\n", r.Rule)
		fmt.Fprintf(w, "      fix: %s\n", r.Fix)
	}
}

func where(r check.Redispatch) string {
	if r.Loc.Row != "" {
		return r.Loc.Row
	}
	return fmt.Sprint(r.Loc.Line)
}

func storedText(r check.Redispatch) string {
	if r.Namespace != "" {
		return fmt.Sprintf("namespace %s name %s", r.Namespace, r.Stored)
	}
	return r.Stored
}

func countText(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" (%d sites)", n)
}

func toolsText(ts []check.Tool) string {
	if len(ts) == 0 {
		return "no current tool"
	}
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

// reachLine is "called X (from …); now reaches Y" or, for a shared spelling, "called one of …".
func reachLine(r check.Redispatch) string {
	called := "called: not known"
	switch {
	case r.Called != nil:
		called = fmt.Sprintf("called %s (%s)", r.Called, r.CalledFrom)
	case len(r.Candidates) > 0:
		called = "called one of " + toolsText(r.Candidates)
	}
	return fmt.Sprintf("%s; now reaches %s", called, toolsText(r.Reaches))
}

// RedispatchSARIF turns findings into SARIF rules and results: rule RuleRedispatch (level
// "error": the history now reads as a call of another tool) or RuleAmbiguous ("warning"),
// located at the store path (reports.SARIFPath) and line, with a fingerprint
// (reports.SARIFFingerprint over "redispatch", class, namespace, stored name, called tool,
// path, row) that ignores the line, as scan's other results.
func RedispatchSARIF(rs []check.Redispatch) ([]reports.SARIFRule, []reports.SARIFResult) {
	var rules []reports.SARIFRule
	seen := map[string]bool{}
	var results []reports.SARIFResult
	for _, r := range rs {
		id, level := RuleRedispatch, "error"
		if r.Class == "ambiguous" {
			id, level = RuleAmbiguous, "warning"
		}
		if !seen[id] {
			seen[id] = true
			rule := reports.SARIFRule{ID: id, HelpURI: "https://github.com/sessionfix/sessionfix/blob/main/docs/report.md"}
			if id == RuleRedispatch {
				rule.Name, rule.Short = "NameRedispatch", "a stored call now reaches another tool"
				rule.Full = "A tool call stored in an agent's session history is read today, by the agent's own name lookup over the current MCP tools, as a call of another raw identity (server key and tool) than the one that was called: two servers whose keys flatten alike, a tool whose name flattens like another's. sessionfix never rewrites it into the other tool."
			} else {
				rule.Name, rule.Short = "NameAmbiguous", "a stored call reaches several tools, or its caller cannot be told"
				rule.Full = "A tool call stored in an agent's session history is registered today by several tools under the agent's own lookup, or its stored spelling is shared by several tools (a middle-truncated legacy name, keys that flattened alike), so the tool it reaches or the one it called cannot be told. sessionfix never rewrites it into either."
			}
			rules = append(rules, rule)
		}
		msg := fmt.Sprintf("%s (%s, %s %s): %s. %s. %s.", storedText(r), r.Agent, r.Kind, r.JSONPath, reachLine(r), r.Rule, r.Fix)
		if r.Loc.Row != "" {
			msg += " At " + r.Loc.Row + "."
		}
		called := ""
		if r.Called != nil {
			called = r.Called.String()
		}
		p := reports.SARIFPath(r.Store)
		results = append(results, reports.SARIFResult{RuleID: id, Message: msg, Path: p, Line: r.Loc.Line, Level: level,
			Fingerprint: reports.SARIFFingerprint("redispatch", r.Class, r.Namespace, r.Stored, called, p, r.Loc.Row),
			Finding:     reports.Finding{Agent: string(r.Agent), Store: r.Store, Site: SiteText(r.Loc, r.Kind, r.JSONPath), Class: r.Class, Name: storedText(r), New: called}})
	}
	return rules, results
}

// Rule ids of re-dispatch findings in SARIF (stable: baselines key on them).
const (
	RuleRedispatch = "sessionfix/name/redispatch"
	RuleAmbiguous  = "sessionfix/name/ambiguous"
)
