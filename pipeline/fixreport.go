package pipeline

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/pipeline/report"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

// FixReport is fix --report FILE (issue 23 item 13): a report of what the run changed, for the
// person whose stores were repaired (a support engineer hands it over): per store old → new
// with counts, the names kept and why, what was skipped, and the command that undoes the run.
// FILE's extension picks the format: .html/.htm one self-contained page (reports.WriteHTML),
// .md/.markdown Markdown. It is filled by the run's final pass (Add) and rendered at its end
// (Render), also when the run stopped (the report then says so); the CLI writes the file.
type FixReport struct {
	// Path is the file named (--report), Format "html" or "md" (by its extension).
	Path, Format string
	stores       []*reportStore
	byPath       map[string]*reportStore
}

// reportStore is one store of the report: its renames and kept names (distinct, counted, in
// the order met) and what --apply did to it ("" in a dry run).
type reportStore struct {
	path, kind     string
	status, reason string
	renames, kept  []reportName
	index          map[reportName]int // position in renames or kept (+1), by old, new/why and kind
}

// reportName is one distinct name of a store: old → new, or a kept name (kept set) and why.
type reportName struct {
	old, new, why string
	kept          bool
	count         int
}

// NewFixReport checks --report's file name: its extension says the format; standard output
// ("-") carries the plan, so it is refused (a *UsageError).
func NewFixReport(path string) (*FixReport, error) {
	if path == "" || path == "-" {
		return nil, usagef("--report needs a file named .html or .md: standard output carries the plan")
	}
	format := ""
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm":
		format = "html"
	case ".md", ".markdown":
		format = "md"
	default:
		return nil, usagef("--report %s: name the file .html (a page) or .md (Markdown), the format follows", path)
	}
	return &FixReport{Path: path, Format: format, byPath: map[string]*reportStore{}}, nil
}

// Add records one store result (a part of a store planned in batches adds to it).
func (fr *FixReport) Add(r *rewrite.StoreResult) {
	if r.Plan == nil {
		return
	}
	fs, _ := FixStoreOf(r, true, false)
	s := fr.byPath[fs.Path]
	if s == nil {
		s = &reportStore{path: fs.Path, kind: report.KindLabel(fs.Kind, fs.Profile), index: map[reportName]int{}}
		fr.byPath[fs.Path] = s
		fr.stores = append(fr.stores, s)
	}
	for _, d := range fs.Decisions {
		var n reportName
		switch d.Action {
		case string(naming.ActRewrite):
			n = reportName{old: d.Old.String(), new: d.New}
		case string(naming.ActKeep):
			why := d.Note
			if why == "" {
				why = report.ClassAction(mcpname.Class(d.Class))
			}
			n = reportName{old: d.Old.String(), why: why, kept: true}
		default:
			continue
		}
		if i := s.index[n]; i > 0 {
			if n.kept {
				s.kept[i-1].count++
			} else {
				s.renames[i-1].count++
			}
			continue
		}
		n.count = 1
		if n.kept {
			s.kept = append(s.kept, n)
			s.index[reportName{old: n.old, why: n.why, kept: true}] = len(s.kept)
		} else {
			s.renames = append(s.renames, n)
			s.index[reportName{old: n.old, new: n.new}] = len(s.renames)
		}
	}
	if o := fs.Outcome; o != nil {
		switch o.Status {
		case "rewritten":
			s.status, s.reason = "rewritten", o.Reason
		case "in-use":
			s.status, s.reason = "in use, skipped", o.Reason
		default:
			s.status, s.reason = o.Status, o.Reason
		}
	}
}

// FixReportRun is what the report says of the run besides its stores (FixReportRunOf).
type FixReportRun struct {
	apply             bool
	stopped           string // why the run stopped early ("" when it ran to its end)
	runID, runDir     string
	undo, applyCmd    string
	rewrote, files    int
	kept              int
	generated         time.Time
	version           string // sessionfix's, in the report's first line
	problems, skipped []string
}

// Render is the report of run in its format, the document the CLI writes to Path; an error
// names --report and the file.
func (fr *FixReport) Render(run FixReportRun) ([]byte, error) {
	fr.count(&run)
	var b bytes.Buffer
	var err error
	if fr.Format == "html" {
		err = reports.WriteHTML(&b, fr.page(run))
	} else {
		err = fr.markdown(&b, run)
	}
	if err != nil {
		return nil, fmt.Errorf("--report %s: %w", fr.Path, err)
	}
	return b.Bytes(), nil
}

// headline is the report's title and its first sentence.
func (run FixReportRun) headline() (title, lead string) {
	switch {
	case !run.apply:
		return "What sessionfix fix would change (dry run)",
			fmt.Sprintf("Nothing was changed. %s would be rewritten in %s; %s would be kept.", reports.Plural(run.rewrote, "name"), reports.Plural(run.files, "store"), reports.Plural(run.kept, "name"))
	case run.runID == "":
		return "What sessionfix fix changed", "Nothing was changed: no name needed rewriting." + keptSentence(run.kept)
	}
	return "What sessionfix fix changed",
		fmt.Sprintf("%s rewritten in %s.%s The files' earlier contents are kept in the run's backups.", reports.Plural(run.rewrote, "name"), reports.Plural(run.files, "store"), keptSentence(run.kept))
}

func keptSentence(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" %s kept as they were (why: below).", reports.Plural(n, "name"))
}

// nextStep is the report's closing advice, a sentence and its command: the undo command of
// an applied run, the apply command of a dry run that found names to rewrite.
func (run FixReportRun) nextStep() (say, cmd string) {
	switch {
	case run.apply && run.undo != "":
		return "To undo every change of this run:", run.undo
	case !run.apply && run.rewrote > 0:
		return "To make these changes, run fix again with --apply --yes (and the options of this run):", run.applyCmd
	}
	return "", ""
}

func (run FixReportRun) meta() []string {
	m := []string{"Generated " + run.generated.UTC().Format(time.RFC3339) + " by sessionfix " + run.version}
	if run.runID != "" {
		m = append(m, "Run "+run.runID+"; backups and manifest in "+run.runDir)
	}
	return m
}

func (run FixReportRun) notes() []string {
	var n []string
	if run.stopped != "" {
		n = append(n, "The run stopped before its end: "+run.stopped+". The stores listed as rewritten were; the others were not.")
	}
	n = append(n, run.skipped...)
	return append(n, run.problems...)
}

// status is a store's state as the report says it.
func (s *reportStore) state(apply bool) string {
	switch {
	case s.status != "":
		return s.status
	case len(s.renames) == 0:
		return "unchanged"
	case apply:
		return "not rewritten"
	}
	return "would be rewritten"
}

func (fr *FixReport) tables(run FixReportRun) (stores, changes, kept *reports.Table) {
	stores = &reports.Table{Columns: []string{"store", "kind", "state", "names rewritten", "names kept"}}
	changes = &reports.Table{Columns: []string{"store", "old", "new", "count"}}
	kept = &reports.Table{Columns: []string{"store", "name", "count", "why"}}
	for _, s := range fr.stores {
		if len(s.renames) == 0 && len(s.kept) == 0 && s.status == "" {
			continue
		}
		n, k := 0, 0
		for _, r := range s.renames {
			n += r.count
			changes.Add(s.path, r.old, r.new, fmt.Sprint(r.count))
		}
		for _, r := range s.kept {
			k += r.count
			kept.Add(s.path, r.old, fmt.Sprint(r.count), r.why)
		}
		state := s.state(run.apply)
		if s.reason != "" {
			state += ": " + s.reason
		}
		stores.Add(s.path, s.kind, state, fmt.Sprint(n), fmt.Sprint(k))
	}
	return stores, changes, kept
}

// count sets the run's numbers from the stores listed: the names and stores rewritten (or, in
// a dry run, to rewrite) and the names kept.
func (fr *FixReport) count(run *FixReportRun) {
	run.rewrote, run.files, run.kept = 0, 0, 0
	for _, s := range fr.stores {
		for _, k := range s.kept {
			run.kept += k.count
		}
		if len(s.renames) == 0 || (run.apply && s.status != "rewritten") {
			continue
		}
		run.files++
		for _, r := range s.renames {
			run.rewrote += r.count
		}
	}
}

// page is the HTML report.
func (fr *FixReport) page(run FixReportRun) *reports.HTMLPage {
	title, lead := run.headline()
	stores, changes, kept := fr.tables(run)
	meta := append([]string{lead}, run.meta()...)
	if say, cmd := run.nextStep(); say != "" {
		meta = append(meta, say+" "+cmd)
	}
	verb := "rewritten"
	if !run.apply {
		verb = "to rewrite"
	}
	return &reports.HTMLPage{
		Title: title,
		Meta:  meta,
		Counts: []reports.HTMLCount{
			{Label: "names " + verb, One: "name " + verb, Value: run.rewrote, Tone: "good", Href: "#changes"},
			{Label: "stores " + verb, One: "store " + verb, Value: run.files, Href: "#stores"},
			{Label: "names kept", One: "name kept", Value: run.kept, Tone: "warn", Href: "#kept"},
			{Label: "stores skipped", One: "store skipped", Value: len(run.skipped), Tone: "bad", Href: "#stores"},
		},
		Notes: run.notes(),
		Sections: []reports.HTMLSection{
			{ID: "changes", Title: "Names rewritten (old → new)", Table: changes, Paths: []string{"store"},
				Empty: "No name was rewritten."},
			{ID: "kept", Title: "Names kept, and why", Table: kept, Paths: []string{"store"},
				Empty: "No name was kept."},
			{ID: "stores", Title: "Stores", Table: stores, Paths: []string{"store"}, Facets: []string{"kind", "state"},
				Empty: "No store held a name to rewrite or keep."},
		},
	}
}

// markdown writes the Markdown report: the same headline, tables and next step as the page.
func (fr *FixReport) markdown(w io.Writer, run FixReportRun) error {
	title, lead := run.headline()
	stores, changes, kept := fr.tables(run)
	fmt.Fprintf(w, "# %s\n\n%s\n\n", reports.MarkdownText(title), reports.MarkdownText(lead))
	for _, m := range run.meta() {
		fmt.Fprintf(w, "- %s\n", reports.MarkdownText(m))
	}
	if say, cmd := run.nextStep(); say != "" {
		fmt.Fprintf(w, "\n%s\n\n%s", reports.MarkdownText(say), reports.MarkdownCodeBlock(cmd, "sh"))
	}
	if n := run.notes(); len(n) > 0 {
		fmt.Fprintln(w, "\n## Notes")
		fmt.Fprintln(w)
		for _, s := range n {
			fmt.Fprintf(w, "- %s\n", reports.MarkdownText(s))
		}
	}
	for _, sec := range []struct {
		title, empty string
		t            *reports.Table
		code         []string
	}{
		{"Names rewritten (old → new)", "No name was rewritten.", changes, []string{"store", "old", "new"}},
		{"Names kept, and why", "No name was kept.", kept, []string{"store", "name"}},
		{"Stores", "No store held a name to rewrite or keep.", stores, []string{"store"}},
	} {
		fmt.Fprintf(w, "\n## %s\n\n", sec.title)
		if len(sec.t.Rows) == 0 {
			fmt.Fprintln(w, sec.empty)
			continue
		}
		if dir := reports.TrimCommonDir(sec.t, "store"); dir != "" {
			fmt.Fprintf(w, "Files in %s\n\n", reports.MarkdownCode(dir))
		}
		if err := reports.WriteMarkdownTable(w, sec.t, sec.code...); err != nil {
			return err
		}
	}
	return nil
}

// FixReportRunOf gathers what the report says of the run from the end of its last pass (e;
// its Summary nil when the run stopped before a pass ended) and stopped (why it stopped early,
// nil at its end): apply (--apply), stateDir (for the undo command), paths (fix's PATHs, for the
// apply command of a dry run), now (the report's date) and version (sessionfix's).
func FixReportRunOf(e FixPassEnd, stopped error, apply bool, stateDir string, paths []string, now time.Time, version string) FixReportRun {
	run := FixReportRun{apply: apply, generated: now, version: version}
	if stopped != nil {
		run.stopped = stopped.Error()
	}
	if s := e.Summary; s != nil {
		for _, p := range s.Report.Problems {
			if p.Severity != string(store.SevInfo) {
				run.problems = append(run.problems, p.String())
			}
		}
	}
	for _, sk := range e.Skipped {
		why := "failed"
		if sk.InUse {
			why = "in use, skipped"
		}
		run.skipped = append(run.skipped, sk.Path+": "+why+": "+sk.Reason)
	}
	if res := e.Result; res != nil && res.RunID != "" {
		run.runID, run.runDir = res.RunID, res.Dir
		run.undo = "sessionfix undo --state-dir " + reports.ShellQuote(stateDir) + " " + res.RunID
	}
	args := []string{"sessionfix", "fix", "--apply", "--yes"}
	for _, p := range paths {
		args = append(args, reports.ShellQuote(p))
	}
	run.applyCmd = strings.Join(args, " ")
	return run
}
