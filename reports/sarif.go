package reports

import (
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
}

// WriteSARIF writes one SARIF 2.1.0 log with one run of tool (name, version, information URI)
// holding rules and results, in the order given.
func WriteSARIF(w io.Writer, tool, version, infoURI string, rules []SARIFRule, results []SARIFResult) error {
	rep, err := sarif.New(sarif.Version210)
	if err != nil {
		return err
	}
	driver := sarif.NewVersionedDriver(tool, version).WithInformationURI(infoURI)
	run := sarif.NewRun(*sarif.NewTool(driver))
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
		if r.Fingerprint != "" {
			res.WithPartialFingerPrints(map[string]interface{}{"sessionfix/v1": r.Fingerprint})
		}
		run.AddResult(res)
	}
	rep.AddRun(run)
	return rep.PrettyWrite(w)
}
