package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/owenrumney/go-sarif/v2/sarif"
)

// SARIFRule is one rule of a SARIF log (an OASIS SARIF 2.1.0 reportingDescriptor, section 3.49): ID is
// stable across runs ("provider/openai-chat/pattern"), so code scanning matches results of two
// runs by rule.
type SARIFRule struct {
	ID, Name, Short, Full, HelpURI string
}

// SARIFResult is one SARIF result (section 3.27 of the 2.1.0 standard). Path is the artifact URI (a path relative to the working
// directory, or an absolute one); Line its 1-based line (0: none, e.g. a SQLite row, then Row
// names it in the message); Fingerprint a value stable across runs for baselines
// (partialFingerprints "sessionfix/v1").
type SARIFResult struct {
	RuleID, Message, Path string
	Line                  int64
	Fingerprint           string
	Level                 string // "error", "warning", "note"; "" = "error"
	// BaselineState is SARIF's baselineState (section 3.27.24) of a run given a baseline:
	// "new", "unchanged" or "absent" (in the baseline, gone now); "" = none written.
	BaselineState string
	// Finding is what the fleet database's row (--format sqlite) says of the result beyond
	// its rule, level, message and fingerprint; never written to the SARIF log.
	Finding Finding
}

// Finding is what a finding is about, as the fleet database (--format sqlite, docs/fleet.md)
// records it: the agent (its id), the store or rule file (Store: an absolute path or a
// redacted reference; "" = the result's Path), where in it (Site: "line 3 <json path>", "row
// <key> <json path>", "permissions.deny[0]"), the class (a name class; an audit pair's
// change), the name and the new name (scan: the stored name and the one fix writes; check:
// the name and the one after fix; audit: the tool's name before and now), and a permission
// rule's kind and text (audit).
type Finding struct {
	Agent, Store, Site, Class, Name, New, RuleKind, Rule string
}

// SARIFBaseline is a previous run's results, keyed by their fingerprint (partialFingerprints
// "sessionfix/v1"): the baseline of --baseline. Results without a known body (a baseline read
// from a JSON report) are kept as fingerprints only: they count as known but cannot be written
// back as "absent".
type SARIFBaseline struct {
	known map[string]*SARIFResult // nil value: fingerprint only
	order []string                // fingerprints in the baseline's order
}

// NewSARIFBaseline is an empty baseline; Add fills it.
func NewSARIFBaseline() *SARIFBaseline { return &SARIFBaseline{known: map[string]*SARIFResult{}} }

// Add records a known fingerprint, with the result it came from when r is not nil.
func (b *SARIFBaseline) Add(fp string, r *SARIFResult) {
	if fp == "" {
		return
	}
	if old, ok := b.known[fp]; ok {
		if old == nil && r != nil {
			b.known[fp] = r
		}
		return
	}
	b.known[fp] = r
	b.order = append(b.order, fp)
}

// Rekey renames the known fingerprint old to now (a finding whose fingerprint formula changed
// between versions): the baseline then knows now, with old's result, in old's place, and
// reports old neither as known nor as absent. Nothing happens when old is unknown or now is
// already known.
func (b *SARIFBaseline) Rekey(old, now string) {
	r, ok := b.known[old]
	if !ok || now == "" || b.Has(now) {
		return
	}
	if r != nil {
		c := *r
		c.Fingerprint = now
		r = &c
	}
	delete(b.known, old)
	b.known[now] = r
	for i, fp := range b.order {
		if fp == old {
			b.order[i] = now
		}
	}
}

// Len is the number of distinct fingerprints.
func (b *SARIFBaseline) Len() int { return len(b.known) }

// Has reports whether fp is in the baseline.
func (b *SARIFBaseline) Has(fp string) bool { _, ok := b.known[fp]; return ok }

// ReadSARIFBaseline reads the results of a SARIF 2.1.0 log sessionfix wrote: rule id, level,
// message text, first location (URI, start line) and the "sessionfix/v1" fingerprint.
// An error when data is no JSON object with "runs".
func ReadSARIFBaseline(data []byte) (*SARIFBaseline, error) {
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID  string `json:"ruleId"`
				Level   string `json:"level"`
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					Physical struct {
						Artifact struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int64 `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				Fingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		return nil, err
	}
	if log.Runs == nil {
		return nil, errors.New(`no "runs"`)
	}
	b := NewSARIFBaseline()
	for _, run := range log.Runs {
		for _, x := range run.Results {
			r := &SARIFResult{RuleID: x.RuleID, Level: x.Level, Message: x.Message.Text, Fingerprint: x.Fingerprints["sessionfix/v1"]}
			if len(x.Locations) > 0 {
				r.Path, r.Line = x.Locations[0].Physical.Artifact.URI, x.Locations[0].Physical.Region.StartLine
			}
			b.Add(r.Fingerprint, r)
		}
	}
	return b, nil
}

// ReadBaseline reads a previous output of a command given as --baseline (what names it: "a
// check", "an audit"): a SARIF log (ReadSARIFBaseline: fingerprints and results) or the
// command's JSON, whose array member (say "findings") is decoded as []T and each element's
// fingerprints (recomputed by fps, without results) are added. Data that is neither is an
// error saying what it is not (the caller names the file).
func ReadBaseline[T any](data []byte, what, member string, fps func(T) []string) (*SARIFBaseline, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("not %s output (--format json or sarif): %v", what, err)
	}
	if runs, ok := probe["runs"]; ok && string(runs) != "null" {
		known, err := ReadSARIFBaseline(data)
		if err != nil {
			return nil, fmt.Errorf("not a SARIF output (--format sarif): %v", err)
		}
		return known, nil
	}
	if raw, ok := probe[member]; ok && string(raw) != "null" {
		var items []T
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("not %s output (--format json or sarif): %v", what, err)
		}
		known := NewSARIFBaseline()
		for _, it := range items {
			for _, fp := range fps(it) {
				known.Add(fp, nil)
			}
		}
		return known, nil
	}
	return nil, fmt.Errorf(`not %s output (no "runs" or %q)`, what, member)
}

// Mark sets BaselineState on results ("unchanged" when the fingerprint is in b, else "new")
// and appends, as "absent", the baseline's results (with a known body) no result of this run
// has. It returns the results and how many are new. A result without fingerprint is new.
func (b *SARIFBaseline) Mark(results []SARIFResult) ([]SARIFResult, int) {
	out := make([]SARIFResult, 0, len(results))
	seen := map[string]bool{}
	n := 0
	for _, r := range results {
		if b.Has(r.Fingerprint) {
			r.BaselineState = "unchanged"
		} else {
			r.BaselineState = "new"
			n++
		}
		seen[r.Fingerprint] = true
		out = append(out, r)
	}
	for _, fp := range b.order {
		if r := b.known[fp]; r != nil && !seen[fp] {
			a := *r
			a.BaselineState = "absent"
			out = append(out, a)
		}
	}
	return out, n
}

// MarkRuns is Mark over the results of several runs (one per home of an audit): each result
// marked in its run, and each baseline result no run has appended as "absent" to the run
// runOf picks for it (an index of runs; out of range: the last run). It returns the runs'
// results and how many are new in all.
func (b *SARIFBaseline) MarkRuns(runs [][]SARIFResult, runOf func(SARIFResult) int) ([][]SARIFResult, int) {
	out := make([][]SARIFResult, len(runs))
	seen := map[string]bool{}
	n := 0
	for i, results := range runs {
		for _, r := range results {
			if b.Has(r.Fingerprint) {
				r.BaselineState = "unchanged"
			} else {
				r.BaselineState = "new"
				n++
			}
			seen[r.Fingerprint] = true
			out[i] = append(out[i], r)
		}
	}
	if len(runs) == 0 {
		return out, n
	}
	for _, fp := range b.order {
		if r := b.known[fp]; r != nil && !seen[fp] {
			a := *r
			a.BaselineState = "absent"
			i := runOf(a)
			if i < 0 || i >= len(runs) {
				i = len(runs) - 1
			}
			out[i] = append(out[i], a)
		}
	}
	return out, n
}

// AddAll adds every fingerprint (and result) of o to b, in o's order.
func (b *SARIFBaseline) AddAll(o *SARIFBaseline) {
	for _, fp := range o.order {
		b.Add(fp, o.known[fp])
	}
}

// SARIFNotification is one entry of invocations[0].toolExecutionNotifications (SARIF 2.1.0
// sections 3.20.21, 3.58): a problem with the run's input (a file it could not read, a line
// that is not JSON, a PATH that does not exist). Level is "error", "warning" or
// "note" ("" = "error"); Message names the path and the reason; Path (may be "") is its
// location's artifact URI.
type SARIFNotification struct {
	Level, Message, Path string
}

// SARIFInvocation is the one invocation object (section 3.20) of a run: Successful is
// executionSuccessful (false when the run failed or could not read all of its input), and
// Notifications its toolExecutionNotifications in the order given.
type SARIFInvocation struct {
	Successful    bool
	Notifications []SARIFNotification
}

// SARIFRun is one run of a SARIF log (section 3.14): its rules, results and invocation (nil:
// none), and its category, runAutomationDetails.id (section 3.17.4; "" = none written): code
// scanning keeps the results of each category apart, so an audit of several homes writes one
// run per home (issue 23 item 1).
type SARIFRun struct {
	Category string
	// Properties are the run's property bag (section 3.8; nil: none written): the host and
	// user a fleet's per-host logs are told apart by (issue 28 item 4).
	Properties map[string]string
	Rules      []SARIFRule
	Results    []SARIFResult
	Invocation *SARIFInvocation
}

// WriteSARIFRuns writes one SARIF 2.1.0 log holding runs, in order, each of tool (name,
// version, information URI).
func WriteSARIFRuns(w io.Writer, tool, version, infoURI string, runs []SARIFRun) error {
	rep, err := sarif.New(sarif.Version210)
	if err != nil {
		return err
	}
	for _, spec := range runs {
		rep.AddRun(sarifRun(tool, version, infoURI, spec))
	}
	return rep.PrettyWrite(w)
}

// sarifRun builds one run of WriteSARIFRuns.
func sarifRun(tool, version, infoURI string, spec SARIFRun) *sarif.Run {
	rules, results, inv := spec.Rules, spec.Results, spec.Invocation
	driver := sarif.NewVersionedDriver(tool, version).WithInformationURI(infoURI)
	run := sarif.NewRun(*sarif.NewTool(driver))
	if spec.Category != "" {
		run.WithAutomationDetails(&sarif.RunAutomationDetails{ID: &spec.Category})
	}
	if len(spec.Properties) > 0 {
		run.Properties = sarif.Properties{}
		for k, v := range spec.Properties {
			run.Properties[k] = v
		}
	}
	// Results must not be null, nor rules (viewers expect arrays).
	run.Results = []*sarif.Result{}
	driver.Rules = []*sarif.ReportingDescriptor{}
	index := map[string]int{}
	for _, r := range rules {
		d := run.AddRule(r.ID).WithName(r.Name).WithShortDescription(sarif.NewMultiformatMessageString(r.Short))
		if r.Full != "" {
			d.WithFullDescription(sarif.NewMultiformatMessageString(r.Full))
		}
		if r.HelpURI != "" {
			d.WithHelpURI(r.HelpURI)
		}
		index[r.ID] = len(index)
	}
	for _, r := range results {
		level := r.Level
		if level == "" {
			level = "error"
		}
		res := sarif.NewRuleResult(r.RuleID).WithLevel(level).WithMessage(sarif.NewTextMessage(r.Message))
		if i, ok := index[r.RuleID]; ok {
			res.WithRuleIndex(i)
		}
		if r.Path != "" {
			pl := sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(r.Path))
			if r.Line > 0 {
				pl.WithRegion(sarif.NewRegion().WithStartLine(int(r.Line)))
			}
			res.AddLocation(sarif.NewLocationWithPhysicalLocation(pl))
		}
		if r.BaselineState != "" {
			res.WithBaselineState(r.BaselineState)
		}
		if r.Fingerprint != "" {
			res.WithPartialFingerPrints(map[string]interface{}{"sessionfix/v1": r.Fingerprint})
		}
		run.AddResult(res)
	}
	if inv != nil {
		i := run.AddInvocation(inv.Successful)
		for _, n := range inv.Notifications {
			level := n.Level
			if level == "" {
				level = "error"
			}
			x := sarif.NewNotification().WithLevel(level).WithTextMessage(n.Message)
			if n.Path != "" {
				x.AddLocation(sarif.NewLocationWithPhysicalLocation(sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(n.Path))))
			}
			i.ToolExecutionNotifications = append(i.ToolExecutionNotifications, x)
		}
	}
	return run
}

// WriteErrorDocument writes to w the document of a run with format "json" or "sarif" that
// stopped with msg before its report, so a script or CI job never reads an empty or open one:
// {"error": msg} on one line, or a SARIF 2.1.0 log of sessionfix version with run (its
// category and properties; no rules, no results) whose invocation has msg as its one error
// notification (executionSuccessful false). Nothing for another format.
func WriteErrorDocument(w io.Writer, format string, run SARIFRun, msg, version string) error {
	switch format {
	case "sarif":
		run.Rules, run.Results = nil, nil
		run.Invocation = &SARIFInvocation{Notifications: []SARIFNotification{{Level: "error", Message: msg}}}
		return WriteSARIFRuns(w, "sessionfix", version, "https://github.com/sessionfix/sessionfix", []SARIFRun{run})
	case "json":
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(map[string]string{"error": msg})
	}
	return nil
}
