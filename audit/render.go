package audit

import (
	"bytes"
	"fmt"

	"github.com/sessionfix/sessionfix/reports"
)

// Rendering is what one agent's audit gives Render for each format;
// each func is called only for its format.
type Rendering struct {
	Pairs   *reports.Table // csv
	Page    func() *reports.HTMLPage
	Doc     func() any
	SARIF   func() []reports.SARIFResult
	Rules   []reports.SARIFRule
	Known   *reports.SARIFBaseline // --baseline: results are marked new/unchanged/absent; nil without
	Version string                 // sessionfix's version, for SARIF's tool.driver
	// Invocation is SARIF's invocation of the run (nil: none written): executionSuccessful
	// false when some input could not be read (exit 3).
	Invocation *reports.SARIFInvocation
	// Category and Properties are the SARIF run's automationDetails.id and property bag (the
	// host and user of a fleet's logs; "" and nil: none written).
	Category   string
	Properties map[string]string
}

// Render renders the main report of an audit in format (csv: the pairs table; html, json,
// sarif from x) into memory, so nothing is written when rendering fails. format is one of
// csv, html, json, sarif (validated by the caller).
func (x Rendering) Render(format string) ([]byte, error) {
	var main bytes.Buffer
	var err error
	switch format {
	case "csv":
		err = reports.WriteCSV(&main, x.Pairs)
	case "html":
		err = reports.WriteHTML(&main, x.Page())
	case "json":
		err = reports.WriteJSON(&main, x.Doc())
	case "sarif":
		results := x.SARIF()
		if x.Known != nil {
			results, _ = x.Known.Mark(results)
		}
		err = reports.WriteSARIFRuns(&main, "sessionfix", x.Version, "https://github.com/sessionfix/sessionfix",
			[]reports.SARIFRun{{Category: x.Category, Properties: x.Properties, Rules: x.Rules, Results: results, Invocation: x.Invocation}})
	}
	if err != nil {
		return nil, fmt.Errorf("audit: render %s: %w", format, err)
	}
	return main.Bytes(), nil
}
