package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/scan"
	"github.com/sessionfix/sessionfix/store"
)

// planOptions are the naming choices shared by scan and fix.
type planOptions struct {
	KeepTruncated bool
	RewriteLossy  bool
	Inventory     string
}

func planFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "keep-truncated", Usage: "keep middle-truncated names that contain a dot instead of normalizing them"},
		&cli.BoolFlag{Name: "rewrite-lossy", Usage: "rewrite lossy legacy names (e.g. mcp__lit__get_data for raw get+data) to their tool's registered name (needs --inventory)"},
		&cli.StringFlag{Name: "inventory", Usage: "JSON inventory of MCP tools (raw identities; see README) to recognise lossy and normalized names", TakesFile: true},
	}
}

func readPlanFlags(c *cli.Context) planOptions {
	return planOptions{KeepTruncated: c.Bool("keep-truncated"), RewriteLossy: c.Bool("rewrite-lossy"), Inventory: c.String("inventory")}
}

// planned is the result of discover + scan + plan.
type planned struct {
	roots   []string
	found   *scan.Found
	results []scan.Result
	plan    *rewrite.Plan
	// settings holds the settings files among the roots and their legacy-spelled rules
	// (reported only; settings are never rewritten).
	settings *settingsScan
}

// progressThreshold: a progress bar appears on a terminal when the work is at least this big.
const progressThreshold = 64 << 20

func scanAndPlan(ctx context.Context, env *Env, paths []string, workers int, hash bool, po planOptions) (*planned, error) {
	if po.RewriteLossy && po.Inventory == "" {
		return nil, usageErrorf("--rewrite-lossy needs --inventory (a lossy name can only be attributed with the raw tool list)")
	}
	ix, err := loadInventoryIndex(po.Inventory)
	if err != nil {
		return nil, err
	}
	roots := paths
	if len(roots) == 0 {
		roots = []string{scan.DefaultQwenRoot(scan.Env{Getenv: env.Getenv, Home: env.Home})}
	}
	settingsFiles, storeRoots, walked := splitSettingsRoots(roots)
	found := scan.Discover(storeRoots)
	found.Ignored = max(0, found.Ignored-walked) // read by the settings pass
	var bar *progressbar.ProgressBar
	opt := scan.Options{Workers: workers, Hash: hash}
	if env.ErrTerminal && found.TotalSize() >= progressThreshold {
		bar = progressbar.DefaultBytes(found.TotalSize(), "scanning")
		bar.ChangeMax64(found.TotalSize())
		opt.Progress = func(n int64) { _ = bar.Add64(n) }
	}
	results, err := scan.Run(ctx, found.Targets, opt)
	if bar != nil {
		_ = bar.Finish()
		fmt.Fprintln(env.Err)
	}
	if err != nil {
		return nil, err
	}
	var scanned []rewrite.Scanned
	for _, r := range results {
		if r.Err == nil {
			scanned = append(scanned, rewrite.Scanned{Store: r.Store, Snap: r.Snap})
		}
	}
	p := rewrite.Build(scanned, rewrite.Policy{KeepTruncated: po.KeepTruncated, RewriteLossy: po.RewriteLossy, Index: ix})
	ss := scanSettings(settingsFiles, env.settingsEnv(), env.Home, ix)
	return &planned{roots: roots, found: found, results: results, plan: p, settings: ss}, nil
}

// failed reports whether some store could not be read or holds an error-level problem.
func (ps *planned) failed() bool {
	for _, is := range ps.found.Issues {
		if is.Severity == store.SevError {
			return true
		}
	}
	for _, r := range ps.results {
		if r.Err != nil || (r.Snap != nil && r.Snap.Failed()) {
			return true
		}
	}
	return ps.settings != nil && len(ps.settings.Errors) > 0
}

// problemRow is one problem in a report.
type problemRow struct {
	Path     string `json:"path"`
	Where    string `json:"where,omitempty"`
	Severity string `json:"severity"`
	Reason   string `json:"reason"`
}

func (p problemRow) String() string {
	loc := p.Path
	if p.Where != "" {
		loc += ":" + p.Where
	}
	return fmt.Sprintf("%s: %s: %s", loc, p.Severity, p.Reason)
}

// problems lists every discovery issue, unreadable store, store problem and plan warning.
func (ps *planned) problems() []problemRow {
	var out []problemRow
	for _, is := range ps.found.Issues {
		out = append(out, problemRow{Path: is.Path, Severity: string(is.Severity), Reason: is.Reason})
	}
	if ps.settings != nil {
		out = append(out, ps.settings.Errors...)
	}
	for _, r := range ps.results {
		if r.Err != nil {
			out = append(out, problemRow{Path: r.Store.Ref().Path, Severity: string(store.SevError), Reason: r.Err.Error()})
			continue
		}
		for _, p := range r.Snap.Problems {
			out = append(out, problemRow{Path: r.Snap.Ref.Path, Where: whereOf(p.Loc), Severity: string(p.Severity), Reason: p.Reason})
		}
	}
	for _, sp := range ps.plan.Stores {
		for _, w := range sp.Warnings {
			out = append(out, problemRow{Path: sp.Snap.Ref.Path, Where: whereOf(w.Loc), Severity: string(w.Severity), Reason: w.Reason})
		}
	}
	return out
}

func whereOf(l store.Loc) string {
	if l.Row == "" && l.Line == 0 {
		return ""
	}
	return l.String()
}

// scanReport is the machine-readable scan result (scan --format json).
type scanReport struct {
	Roots    []string              `json:"roots"`
	Elapsed  string                `json:"elapsed"`
	Bytes    int64                 `json:"bytes"`
	Records  int64                 `json:"records"`
	Ignored  int                   `json:"ignored_files"`
	Totals   rewrite.Totals        `json:"totals"`
	Classes  map[mcpname.Class]int `json:"classes"`
	Stores   []storeRow            `json:"stores"`
	Renames  []renameRow           `json:"renames"`
	Kept     []renameRow           `json:"kept"`
	Problems []problemRow          `json:"problems"`

	// SettingsRules are the rules of settings files among the roots written in legacy
	// spellings (reported, never rewritten).
	SettingsRules []settingsRuleRow `json:"settings_rules"`
}

type storeRow struct {
	Path     string `json:"path"`
	Kind     string `json:"kind"`
	Records  int64  `json:"records"`
	Sites    int    `json:"sites"`
	Rewrite  int    `json:"rewrite"`
	Kept     int    `json:"kept"`
	Problems int    `json:"problems"`
	Error    string `json:"error,omitempty"`
}

type renameRow struct {
	Old   string `json:"old"`
	New   string `json:"new,omitempty"`
	Class string `json:"class"`
	Count int    `json:"count"`
	Note  string `json:"note,omitempty"`
}

func (ps *planned) report(elapsed time.Duration) *scanReport {
	rep := &scanReport{Roots: ps.roots, Elapsed: elapsed.Round(time.Millisecond).String(), Ignored: ps.found.Ignored,
		Totals: ps.plan.Totals(), Problems: ps.problems()}
	rep.Classes = rep.Totals.ByClass
	byPath := map[string]*rewrite.StorePlan{}
	for _, sp := range ps.plan.Stores {
		byPath[sp.Snap.Ref.Path] = sp
	}
	renames := map[[3]string]*renameRow{}
	kept := map[[3]string]*renameRow{}
	for _, r := range ps.results {
		row := storeRow{Path: r.Store.Ref().Path, Kind: string(r.Store.Ref().Kind)}
		if r.Err != nil {
			row.Error = r.Err.Error()
			rep.Stores = append(rep.Stores, row)
			continue
		}
		rep.Bytes += r.Snap.State.Size
		rep.Records += r.Snap.Records
		row.Records, row.Problems = r.Snap.Records, len(r.Snap.Problems)
		if sp := byPath[row.Path]; sp != nil {
			row.Sites, row.Rewrite, row.Kept = len(sp.Decisions), sp.Count(rewrite.ActRewrite), sp.Count(rewrite.ActKeep)
			row.Problems += len(sp.Warnings)
			for _, d := range sp.Decisions {
				var m map[[3]string]*renameRow
				switch d.Action {
				case rewrite.ActRewrite:
					m = renames
				case rewrite.ActKeep:
					m = kept
				default:
					continue
				}
				k := [3]string{d.Site.Name, d.New, d.Note}
				if m[k] == nil {
					m[k] = &renameRow{Old: d.Site.Name, New: d.New, Class: string(d.Class), Note: d.Note}
				}
				m[k].Count++
			}
		}
		rep.Stores = append(rep.Stores, row)
	}
	rep.Renames, rep.Kept = sortedRows(renames), sortedRows(kept)
	rep.SettingsRules = ps.settings.rows()
	return rep
}

func sortedRows(m map[[3]string]*renameRow) []renameRow {
	out := make([]renameRow, 0, len(m))
	for _, r := range m {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Old != out[j].Old {
			return out[i].Old < out[j].Old
		}
		return out[i].New < out[j].New
	})
	return out
}

func classTable(rep *scanReport) *reports.Table {
	t := &reports.Table{Columns: []string{"class", "names", "fix action"}}
	for _, c := range mcpname.Classes {
		n := rep.Classes[c]
		if n == 0 {
			continue
		}
		t.Add(string(c), fmt.Sprint(n), classAction(c))
	}
	return t
}

func classAction(c mcpname.Class) string {
	switch c {
	case mcpname.ClassLegacyDotted:
		return "rewrite to normalizeMcp(name)"
	case mcpname.ClassLegacyTruncated:
		return "keep (middle cannot be rebuilt)"
	case mcpname.ClassLegacyTruncatedDotted:
		return "rewrite to normalizeMcp(name); keep with --keep-truncated"
	case mcpname.ClassLossyLegacy:
		return "keep; rewrite with --rewrite-lossy"
	default:
		return "none"
	}
}

func storeTable(rep *scanReport) *reports.Table {
	t := &reports.Table{Columns: []string{"store", "kind", "records", "sites", "rewrite", "kept", "problems"}}
	for _, s := range rep.Stores {
		if s.Error != "" {
			t.Add(s.Path, s.Kind, "-", "-", "-", "-", "unreadable")
			continue
		}
		t.Add(s.Path, s.Kind, fmt.Sprint(s.Records), fmt.Sprint(s.Sites), fmt.Sprint(s.Rewrite), fmt.Sprint(s.Kept), fmt.Sprint(s.Problems))
	}
	return t
}

func renameTable(rep *scanReport) *reports.Table {
	t := &reports.Table{Columns: []string{"old", "new", "class", "count"}}
	for _, r := range rep.Renames {
		t.Add(r.Old, r.New, r.Class, fmt.Sprint(r.Count))
	}
	for _, r := range rep.Kept {
		t.Add(r.Old, "(kept)", r.Class, fmt.Sprint(r.Count))
	}
	return t
}

func writeProblems(w io.Writer, probs []problemRow) {
	if len(probs) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", plural(len(probs), "problem"))
	for _, p := range probs {
		fmt.Fprintf(w, "  %s\n", reports.Printable(p.String()))
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "y") {
		return fmt.Sprintf("%d %sies", n, what[:len(what)-1])
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
