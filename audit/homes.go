package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/reports"
)

// Several homes in one audit (issue 23 item 1): each home (an agent home given as PATH, or a
// directory holding one) is audited on its own by its agent's Run, and the report has a section
// per home in every format:
//
//   - csv (and the tools table): one table, its first column "home" (the home's PATH as given);
//   - json: {"homes": [{"home": PATH, "agent": ID, "report": <the agent's document>}, …]};
//   - html: one page, each home's counts, notes and tables under its own headings;
//   - sarif: one run per home, its runAutomationDetails.id (a code scanning category per home)
//     Home.Category as the command sets it ("sessionfix/<host>/<user>/audit/<PATH>/"), else
//     HomeCategory's "sessionfix/audit/<PATH>/".
//
// --fail-on and --baseline count every home's findings; the command prints each home's summary.

// Home is one home's audit in a multi-home report: the home's PATH as given, the Rendering of
// its audit (Known, Version and Invocation are the report's) and its tools table.
type Home struct {
	// Path names the home: its PATH as given, or an agent and its home directory.
	Path string
	// Agent is the agent's id (the JSON report's "agent").
	Agent      string
	Rendering  Rendering
	Tools      *reports.Table
	Invocation *reports.SARIFInvocation
	// Category and Properties are the home's SARIF run's automationDetails.id ("" =
	// HomeCategory(Path)) and property bag (the host and the home's user; nil: none).
	Category   string
	Properties map[string]string
}

// HomesRendering is the report of several homes' audits (in the order given).
type HomesRendering struct {
	Homes   []Home
	Known   *reports.SARIFBaseline // --baseline: results marked new/unchanged/absent; nil without
	Version string
}

// Render renders the report in format (csv, html, json or sarif) into memory.
func (x HomesRendering) Render(format string) ([]byte, error) {
	var main bytes.Buffer
	var err error
	switch format {
	case "csv":
		err = reports.WriteCSV(&main, x.table(func(h Home) *reports.Table { return h.Rendering.Pairs }))
	case "html":
		err = reports.WriteHTML(&main, x.page())
	case "json":
		type home struct {
			Home   string `json:"home"`
			Agent  string `json:"agent,omitempty"`
			Report any    `json:"report"`
		}
		doc := struct {
			Homes []home `json:"homes"`
		}{Homes: []home{}}
		for _, h := range x.Homes {
			doc.Homes = append(doc.Homes, home{Home: h.Path, Agent: h.Agent, Report: h.Rendering.Doc()})
		}
		err = reports.WriteJSON(&main, doc)
	case "sarif":
		results := make([][]reports.SARIFResult, len(x.Homes))
		for i, h := range x.Homes {
			results[i] = h.Rendering.SARIF()
		}
		if x.Known != nil {
			results, _ = x.Known.MarkRuns(results, x.homeOf)
		}
		var runs []reports.SARIFRun
		for i, h := range x.Homes {
			category := h.Category
			if category == "" {
				category = HomeCategory(h.Path)
			}
			runs = append(runs, reports.SARIFRun{Category: category, Properties: h.Properties, Rules: h.Rendering.Rules, Results: results[i], Invocation: h.Invocation})
		}
		err = reports.WriteSARIFRuns(&main, "sessionfix", x.Version, "https://github.com/sessionfix/sessionfix", runs)
	}
	if err != nil {
		return nil, fmt.Errorf("audit: render %s: %w", format, err)
	}
	return main.Bytes(), nil
}

// Tools is the homes' tools tables as one, its first column "home".
func (x HomesRendering) Tools() *reports.Table {
	return x.table(func(h Home) *reports.Table { return h.Tools })
}

// homeOf is the index of the home a SARIF result's file lies in (its path under the home's
// PATH), or -1.
func (x HomesRendering) homeOf(r reports.SARIFResult) int {
	p := filepath.ToSlash(filepath.Clean(r.Path))
	for i, h := range x.Homes {
		home := filepath.ToSlash(filepath.Clean(reports.SARIFPath(h.Path)))
		if strings.HasPrefix(p, home+"/") {
			return i
		}
	}
	return -1
}

// HomeCategory is the SARIF run category of a home's audit (runAutomationDetails.id: a
// category ends with "/").
func HomeCategory(path string) string { return "sessionfix/audit/" + path + "/" }

// table joins one table of each home: "home" and the union of their columns (in first-seen
// order; a home's table without a column leaves its cells empty), each home's rows in order.
func (x HomesRendering) table(of func(Home) *reports.Table) *reports.Table {
	var cols []string
	for _, h := range x.Homes {
		if t := of(h); t != nil {
			for _, c := range t.Columns {
				if !slices.Contains(cols, c) {
					cols = append(cols, c)
				}
			}
		}
	}
	out := &reports.Table{Columns: append([]string{"home"}, cols...)}
	for _, h := range x.Homes {
		t := of(h)
		if t == nil {
			continue
		}
		at := make([]int, len(t.Columns))
		for i, c := range t.Columns {
			at[i] = slices.Index(cols, c)
		}
		for _, r := range t.Rows {
			row := make([]string, len(out.Columns))
			row[0] = reports.Printable(h.Path)
			for i, v := range r {
				if i < len(at) {
					row[at[i]+1] = v
				}
			}
			out.Rows = append(out.Rows, row)
		}
	}
	return out
}

// page is every home's page as one: the title says how many homes; each home's meta lines,
// counts and notes are named by its PATH; its sections keep their tables under "PATH: title",
// their ids prefixed "home<N>-" (the counts' links follow them).
func (x HomesRendering) page() *reports.HTMLPage {
	out := &reports.HTMLPage{Title: fmt.Sprintf("sessionfix audit: %d homes, each audited on its own", len(x.Homes))}
	for i, h := range x.Homes {
		p := h.Rendering.Page()
		prefix := fmt.Sprintf("home%d-", i+1)
		if i == 0 {
			out.Legend = p.Legend
		}
		out.Meta = append(out.Meta, fmt.Sprintf("Home %d: %s — %s", i+1, h.Path, p.Title))
		for _, m := range p.Meta {
			out.Meta = append(out.Meta, h.Path+": "+m)
		}
		for _, c := range p.Counts {
			c.Label = h.Path + ": " + c.Label
			if c.Href != "" {
				c.Href = "#" + prefix + strings.TrimPrefix(c.Href, "#")
			}
			out.Counts = append(out.Counts, c)
		}
		for _, n := range p.Notes {
			out.Notes = append(out.Notes, h.Path+": "+n)
		}
		for _, s := range p.Sections {
			s.ID = prefix + s.ID
			s.Title = h.Path + ": " + s.Title
			out.Sections = append(out.Sections, s)
		}
	}
	return out
}

// readHomesBaseline reads the JSON report of a multi-home audit as a baseline: every home's
// report's pairs (ok false when data has no "homes" array).
func readHomesBaseline(data []byte) (b *reports.SARIFBaseline, ok bool, err error) {
	var doc struct {
		Homes []struct {
			Report json.RawMessage `json:"report"`
		} `json:"homes"`
	}
	if json.Unmarshal(data, &doc) != nil || doc.Homes == nil {
		return nil, false, nil
	}
	b = reports.NewSARIFBaseline()
	for i, h := range doc.Homes {
		one, err := ReadBaseline(h.Report)
		if err != nil {
			return nil, true, fmt.Errorf("home %d: %w", i+1, err)
		}
		b.AddAll(one)
	}
	return b, true, nil
}
