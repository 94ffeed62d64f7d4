package textreport

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/pipeline/report"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/check"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/reports"
)

// checkListed and checkWhere bound check's text output (issue 23 item 11: it grows with what
// it has to say, not with the size of the stores): at most checkListed rejected names (per
// store), each with at most checkWhere lines or rows; --format json has every finding.
const (
	checkListed = 100
	checkWhere  = 10
)

// Check prints check's text report of rep to w: the provider table, then per store (session)
// each distinct rejected name with its records, rules and after-fix verdict (res says which
// agent release sent it), then the providers' error texts and the closing line.
func Check(w io.Writer, rep *report.CheckReport, res *check.Result) {
	ids := make([]string, len(rep.Providers))
	for i, p := range rep.Providers {
		ids[i] = p.ID
	}
	fmt.Fprintf(w, "checked %s in %s against %s (%s)\n", reports.Plural(rep.Checked, "name"), reports.Plural(rep.Stores, "store"),
		reports.Plural(len(rep.Providers), "provider"), strings.Join(ids, ", "))
	if len(rep.Skipped) > 0 {
		var parts []string
		total := 0
		for _, k := range slices.Sorted(maps.Keys(rep.Skipped)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, rep.Skipped[k]))
			total += rep.Skipped[k]
		}
		fmt.Fprintf(w, "%s not sent to any provider, not checked (%s)\n", reports.Plural(total, "site"), strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	t := &reports.Table{Columns: []string{"provider", "rejects", "after fix", "history", "rule"}}
	for _, p := range rep.Providers {
		t.Add(p.ID, fmt.Sprint(p.Now), fmt.Sprint(p.AfterFix), p.History, p.Rule)
	}
	_ = reports.WriteText(w, t)

	type key struct{ store, name string }
	type entry struct {
		f     report.CheckFinding
		where []string
	}
	var order []key
	byKey := map[key]*entry{}
	for _, f := range rep.Findings {
		if len(f.Now) == 0 && len(f.AfterFix) == 0 {
			continue
		}
		k := key{f.Store, f.Name + "\x00" + f.After}
		e := byKey[k]
		if e == nil {
			e = &entry{f: f}
			byKey[k] = e
			order = append(order, k)
		}
		var at string
		switch {
		case f.Row != "":
			at = "row " + f.Row
		case f.Line > 0:
			at = fmt.Sprintf("line %d", f.Line)
		}
		if at != "" && !slices.Contains(e.where, at) {
			e.where = append(e.where, at)
		}
	}
	last := "\x00"
	for i, k := range order {
		if i == checkListed {
			fmt.Fprintf(w, "\n… and %s not listed (--format json lists every finding)\n", reports.Plural(len(order)-i, "more rejected name"))
			break
		}
		e := byKey[k]
		if k.store != last {
			last = k.store
			fmt.Fprintln(w)
			if k.store == "" {
				fmt.Fprintln(w, "declared tools (--inventory):")
			} else {
				fmt.Fprintln(w, reports.Printable(k.store)+":")
			}
		}
		f := e.f
		label := f.Name
		if f.Kind == "declared-raw" {
			label += " (raw identity, as the server declares it)"
		}
		if f.Release != "" {
			label += fmt.Sprintf(" (%s offers %s so: %s)", f.Release, f.Path, f.Note)
		}
		if f.Sent != "" {
			label += fmt.Sprintf(" (sent as %s by %s %s%s)", f.Sent, releaseAgentName(res), res.Release, exceptHelp(res))
		}
		if len(f.Now) > 0 {
			at := ""
			switch n := len(e.where); {
			case n > checkWhere:
				at = fmt.Sprintf(" at %s, … (%d more)", strings.Join(e.where[:checkWhere], ", "), n-checkWhere)
			case n > 0:
				at = " at " + strings.Join(e.where, ", ")
			}
			fmt.Fprintf(w, "  %s\n    would be rejected by %s%s\n", reports.Printable(label), report.RejectedIDs(f.Now), at)
			ruleLines(w, f.Now)
		} else {
			fmt.Fprintf(w, "  %s\n    accepted now\n", reports.Printable(label))
		}
		switch {
		case f.Action == string(naming.ActRewrite) && len(f.AfterFix) == 0:
			fmt.Fprintf(w, "    after fix: %s passes every provider checked\n", reports.Printable(f.After))
		case f.Action == string(naming.ActRewrite):
			fmt.Fprintf(w, "    after fix: %s is still rejected by %s\n", reports.Printable(f.After), report.RejectedIDs(f.AfterFix))
			ruleLines(w, f.AfterFix)
		case f.Fix != "":
			fmt.Fprintf(w, "    after fix: unchanged (fix never renames a declared tool; %s)\n", f.Fix)
		case f.Kind == "declared" || f.Kind == "declared-raw":
			fmt.Fprintln(w, "    after fix: unchanged (fix never renames a declared tool; rename it at its server)")
		default:
			fmt.Fprintf(w, "    after fix: unchanged (class %s: fix does not rename it), still rejected\n", f.Class)
		}
	}
	var texts []string
	for _, p := range rep.Providers {
		if p.Now+p.AfterFix > 0 && p.ErrorText != "" {
			texts = append(texts, fmt.Sprintf("  %s: %q", p.ID, p.ErrorText))
		}
	}
	if len(texts) > 0 {
		fmt.Fprintln(w, "\nwhat the provider answers (quoted from its source; --format json gives the sources):")
		for _, s := range texts {
			fmt.Fprintln(w, s)
		}
	}
	report.WriteRedispatchText(w, rep.Redispatch)
	fmt.Fprintln(w)
	if rep.Rejected == 0 {
		fmt.Fprintf(w, "no name is rejected by %s\n", strings.Join(ids, ", "))
		return
	}
	if b := rep.Baseline; b != nil {
		fmt.Fprintf(w, "%s (%s) rejected now, %d of them new since the baseline %s (%d known fingerprints: provider, rule, name, store); %s still rejected after fix\n",
			reports.Plural(rep.Rejected, "name site"), reports.Plural(rep.Distinct, "distinct name"), b.New, b.File, b.Known, reports.Plural(rep.RejectedAfterFix, "name site"))
		return
	}
	fmt.Fprintf(w, "%s (%s) rejected now; %s still rejected after fix (exit %d)\n",
		reports.Plural(rep.Rejected, "name site"), reports.Plural(rep.Distinct, "distinct name"), reports.Plural(rep.RejectedAfterFix, "name site"), exitcode.Finding)
}

// ruleLines prints the broken rules, one line per distinct rule text with the providers
// that give it ("openai-chat, bedrock: pattern: does not match [a-zA-Z0-9_-]+").
func ruleLines(w io.Writer, rs []report.CheckRejection) {
	var order []string
	by := map[string][]string{}
	for _, r := range rs {
		d := ruleDetails(r)
		if by[d] == nil {
			order = append(order, d)
		}
		by[d] = append(by[d], r.Provider)
	}
	for _, d := range order {
		fmt.Fprintf(w, "      %s: %s\n", strings.Join(by[d], ", "), d)
	}
}

func ruleDetails(r report.CheckRejection) string {
	parts := make([]string, len(r.Rules))
	for i, v := range r.Rules {
		parts[i] = v.Rule + ": " + v.Detail
	}
	return strings.Join(parts, "; ")
}

// releaseAgentName is the product name of the agent whose release check checked.
func releaseAgentName(res *check.Result) string {
	if a := all.Lookup(res.ReleaseAgent); a != nil {
		return a.Core().Name
	}
	return string(res.ReleaseAgent)
}

// exceptHelp is ", except to P" for the providers that still receive the stored names
// (agent.Sending.Verbatim), or "".
func exceptHelp(res *check.Result) string {
	if v := res.Verbatim(); len(v) > 0 {
		return ", except to " + strings.Join(v, ", ")
	}
	return ""
}
