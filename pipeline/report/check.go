package report

import (
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/check"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
)

// CheckReport is check's report (--format json prints it as is; docs/report.md): the
// providers checked, every finding with the providers rejecting it now and after fix.
type CheckReport struct {
	Stores  int            `json:"stores"`
	Checked int            `json:"names_checked"`
	Skipped map[string]int `json:"sites_not_sent"`
	// Rejected counts the names (sites, declared tools) some provider rejects now;
	// RejectedAfterFix those still rejected with the name fix would write.
	Rejected         int `json:"rejected"`
	Distinct         int `json:"rejected_distinct_names"`
	RejectedAfterFix int `json:"rejected_after_fix"`
	// Baseline is set with --baseline: how many findings its file held, and how many of this
	// run's rejected name sites are new since.
	Baseline *CheckBaseline `json:"baseline,omitempty"`
	// Known is the --baseline's fingerprints (MarkBaseline; nil without): SARIF marks results with it.
	Known     *reports.SARIFBaseline `json:"-"`
	Providers []CheckProvider        `json:"providers"`
	Findings  []CheckFinding         `json:"findings"`
	Problems  []ProblemRow           `json:"problems"`
	// Redispatch are the stored calls the agent's own lookup reads as calls of another tool
	// today, or of several (ScanReport's; not counted in the exit status).
	Redispatch []check.Redispatch `json:"redispatch"`
	// Release is the value of the SentAsOption of agent ReleaseAgent (check.Result's; "" =
	// the stored bytes were checked). MarshalJSON writes it last, as the member named by that
	// option's Report, omitted when "".
	Release      string        `json:"-"`
	ReleaseAgent store.AgentID `json:"-"`
}

// MarshalJSON is the report's JSON: its tagged fields, then Release as the member its agent's
// SentAsOption.Report names (none when Release or that name is "").
func (r CheckReport) MarshalJSON() ([]byte, error) {
	type plain CheckReport // the same fields without this method
	b, err := compactJSON(plain(r))
	if err != nil || r.Release == "" {
		return b, err
	}
	a := all.Lookup(r.ReleaseAgent)
	if a == nil || all.SentAsOptionOf(a) == nil || all.SentAsOptionOf(a).Report == "" {
		return b, nil
	}
	k, err := compactJSON(all.SentAsOptionOf(a).Report)
	if err != nil {
		return nil, err
	}
	v, err := compactJSON(r.Release)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(k)+len(v)+2)
	out = append(out, b[:len(b)-1]...) // b is an object: drop its closing brace
	out = append(append(append(append(out, ','), k...), ':'), v...)
	return append(out, '}'), nil
}

// CheckProvider is one provider checked: its rule and sources, and how many names it rejects.
type CheckProvider struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Rule      string `json:"rule"`
	Unit      string `json:"unit,omitempty"`
	UnitWhy   string `json:"unit_why,omitempty"`
	History   string `json:"history_validated"`
	Source    string `json:"source"`
	ErrorText string `json:"error_text,omitempty"`
	Verified  bool   `json:"verified"`
	// Now and AfterFix count the names this provider rejects before and after fix.
	Now      int `json:"rejects"`
	AfterFix int `json:"rejects_after_fix"`
}

// CheckFinding is one name site (or declared tool) some provider rejects now or after fix.
type CheckFinding struct {
	Store string `json:"store,omitempty"`
	Line  int64  `json:"line,omitempty"`
	Row   string `json:"row,omitempty"`
	Kind  string `json:"kind"`
	Path  string `json:"path,omitempty"`
	Name  string `json:"name"`
	// Sent is the name the resuming release sends instead (Release; "" = Name).
	Sent     string           `json:"sent_as,omitempty"`
	Class    string           `json:"class,omitempty"`
	Action   string           `json:"fix_action"`
	After    string           `json:"after_fix"`
	Now      []CheckRejection `json:"rejected_by"`
	AfterFix []CheckRejection `json:"rejected_after_fix_by"`
	// New: with --baseline, some provider rejection of this site is not in the baseline.
	New bool `json:"new_since_baseline,omitempty"`
	// Release, Note and Fix: a name an agent release offers for a configured tool
	// (Kind "declared", Store the config, Path "server/tool"): the release, what the name
	// stands for, what helps.
	Release string `json:"release,omitempty"`
	Note    string `json:"note,omitempty"`
	Fix     string `json:"fix,omitempty"`
}

// CheckBaseline is --baseline's file, its fingerprint count and the findings new since.
type CheckBaseline struct {
	File  string `json:"file"`
	Known int    `json:"known_fingerprints"`
	New   int    `json:"new"`
}

// declaredLocation stands for the store in the fingerprint of a declared tool's finding: the
// inventory file's path is where SARIF shows it, but the same declared name read from an
// inventory at another path (a CI job's temp copy) is the same finding.
const declaredLocation = "(declared tools)"

// fingerprints are the identities of a finding's rejections (one per provider and rule), as
// SARIF partialFingerprints "sessionfix/v1" carries them. legacy are the same identities as
// versions before 2026-12 wrote them for a declared tool (located at the inventory path),
// nil for a stored name; a baseline holding either form knows the rejection.
func (f CheckFinding) fingerprints(inventory string) (fps, legacy []string) {
	for _, r := range f.Now {
		for _, v := range r.Rules {
			if f.Store != "" {
				fps = append(fps, reports.SARIFFingerprint(r.Provider, v.Rule, f.Name, reports.SARIFPath(f.Store), f.Row))
				continue
			}
			fps = append(fps, reports.SARIFFingerprint(r.Provider, v.Rule, f.Name, declaredLocation, f.Row))
			legacy = append(legacy, reports.SARIFFingerprint(r.Provider, v.Rule, f.Name, reports.SARIFPath(inventory), f.Row))
		}
	}
	return fps, legacy
}

// CheckRejection is one provider's rejection of a name: the rules it breaks.
type CheckRejection struct {
	Provider string      `json:"provider"`
	Rules    []CheckRule `json:"rules"`
}

// CheckRule is a broken rule ("pattern", "length") and what breaks it.
type CheckRule struct {
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
}

// RejectedIDs are the providers of rs, comma-separated ("openai-chat, bedrock").
func RejectedIDs(rs []CheckRejection) string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.Provider
	}
	return strings.Join(ids, ", ")
}

// SARIF turns the report into SARIF rules and results: one rule per provider and rule it
// breaks, id "provider/<provider id>/<rule>" (stable: "provider/bedrock/length"), and one
// result per finding and rejecting provider, located at the store and line (a SQLite row is
// named in the message; a declared tool is located at the inventory file). The fingerprint
// is provider, name and store, without the line: a finding stays the same finding when
// records are appended before it. The re-dispatch findings follow (RedispatchSARIF).
func (rep *CheckReport) SARIF(inventory string) ([]reports.SARIFRule, []reports.SARIFResult) {
	provs := map[string]CheckProvider{}
	for _, p := range rep.Providers {
		provs[p.ID] = p
	}
	var rules []reports.SARIFRule
	seen := map[string]bool{}
	var results []reports.SARIFResult
	for _, f := range rep.Findings {
		for _, r := range f.Now {
			p := provs[r.Provider]
			for _, v := range r.Rules {
				id := "provider/" + p.ID + "/" + v.Rule
				if !seen[id] {
					seen[id] = true
					full := fmt.Sprintf("%s rejects a tool name that breaks its rule: %s. Source: %s.", p.Name, p.Rule, p.Source)
					if p.ErrorText != "" {
						full += fmt.Sprintf(" The provider answers: %q", p.ErrorText)
					}
					rules = append(rules, reports.SARIFRule{ID: id, Name: reports.SARIFRuleName(p.ID, v.Rule),
						Short: fmt.Sprintf("%s rejects the name (%s)", p.Name, v.Rule), Full: full,
						HelpURI: "https://github.com/sessionfix/sessionfix/blob/main/docs/providers.md"})
				}
				msg := fmt.Sprintf("%s would be rejected by %s: %s.", f.Name, p.Name, v.Detail)
				if f.Row != "" {
					msg += " At " + f.Row + "."
				}
				switch {
				case f.Action == string(naming.ActRewrite) && len(f.AfterFix) == 0:
					msg += fmt.Sprintf(" After sessionfix fix: %s, which every provider checked accepts.", f.After)
				case f.Action == string(naming.ActRewrite):
					msg += fmt.Sprintf(" After sessionfix fix: %s, still rejected by %s.", f.After, RejectedIDs(f.AfterFix))
				default:
					msg += " sessionfix fix does not change it."
				}
				path, where := f.Store, reports.SARIFPath(f.Store)
				if path == "" {
					path, where = inventory, declaredLocation
				}
				finding := reports.Finding{Store: path, Site: SiteText(store.Loc{Line: f.Line, Row: f.Row}, f.Kind, f.Path), Class: f.Class, Name: f.Name}
				if f.Action == string(naming.ActRewrite) {
					finding.New = f.After
				}
				results = append(results, reports.SARIFResult{RuleID: id, Message: msg, Path: reports.SARIFPath(path), Line: f.Line,
					Fingerprint: reports.SARIFFingerprint(p.ID, v.Rule, f.Name, where, f.Row), Finding: finding})
			}
		}
	}
	rrules, rresults := RedispatchSARIF(rep.Redispatch)
	return append(rules, rrules...), append(results, rresults...)
}

// MarkBaseline records a --baseline (file: its path, known: its fingerprints) in the report:
// Baseline's counts, each finding's New (some rejection of it is not in known), and Known for
// SARIF's baselineState. inventory locates declared tools, as in SARIF.
func (rep *CheckReport) MarkBaseline(file string, known *reports.SARIFBaseline, inventory string) {
	rep.Baseline = &CheckBaseline{File: file, Known: known.Len()}
	rep.Known = known
	for i := range rep.Findings {
		f := &rep.Findings[i]
		fps, legacy := f.fingerprints(inventory)
		for i, fp := range fps {
			if legacy != nil {
				known.Rekey(legacy[i], fp) // a baseline written before declaredLocation
			}
			if !known.Has(fp) {
				f.New = true
			}
		}
		if f.New {
			rep.Baseline.New++
		}
	}
}

// ReadCheckBaseline reads the fingerprints of a previous check output: a SARIF log (its
// partialFingerprints "sessionfix/v1", with the results for "absent") or check's JSON
// (fingerprints recomputed from its findings; inventory locates declared tools). Data that is
// neither is an error saying what it is not (the caller names the file).
func ReadCheckBaseline(data []byte, inventory string) (*reports.SARIFBaseline, error) {
	return reports.ReadBaseline(data, "a check", "findings", func(f CheckFinding) []string {
		fps, _ := f.fingerprints(inventory)
		return fps
	})
}
