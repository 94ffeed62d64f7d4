package audit

import (
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/reports"
)

// ReadBaseline reads a previous audit output (either audit's) as a baseline: a SARIF log (its
// results and fingerprints, reports.ReadSARIFBaseline) or the JSON document (fingerprints
// recomputed from its pairs: class from change and now, settings file, key, rule text, raw
// identity, as SARIF gives them; a pair whose rule is ignored now counts as refused:
// permission.RefusedNow).
// Data that is neither is an error saying what it is not (the caller names the file). The JSON
// report of several homes ({"homes": [{"report": …}]}) gives every home's pairs.
func ReadBaseline(data []byte) (*reports.SARIFBaseline, error) {
	if b, ok, err := readHomesBaseline(data); ok {
		return b, err // the JSON report of several homes: each home's pairs
	}
	return reports.ReadBaseline(data, "an audit", "pairs", func(p reports.JSONPair) []string {
		raw, file := mcpname.Raw(p.Server, p.Tool), reports.SARIFPath(p.File)
		var fps []string
		if p.Change == string(permission.ChangeLost) {
			fps = append(fps, reports.SARIFFingerprint("audit", "lost", file, p.Key, p.Rule, raw))
		}
		if p.Change == string(permission.ChangeGained) {
			fps = append(fps, reports.SARIFFingerprint("audit", "gained", file, p.Key, p.Rule, raw))
		}
		if permission.RefusedNow(p.Now) {
			fps = append(fps, reports.SARIFFingerprint("audit", "refused", file, p.Key, p.Rule, raw))
		}
		return fps
	})
}
