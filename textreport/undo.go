package textreport

import (
	"fmt"
	"io"

	"github.com/sessionfix/sessionfix/pipeline/report"

	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/runlog"
)

// UndoListed is how many restored files undo's text output lists one by one without -v; the
// others are counted in one line (files refused or failed are always listed, on standard
// error).
const UndoListed = 20

// Undo prints an undo as it goes (pipeline.UndoHooks' Start and File, the list under the
// --force question, the closing lines) to Out, the files refused, failed or restored with a
// problem to Err (issue 8 item 7), and fills Report (undo --format json, whose text goes to
// io.Discard). Verbose is -v: every restored file listed.
type Undo struct {
	Out, Err io.Writer
	Verbose  bool
	Report   *report.UndoReport
	// listed and unlisted count the restored files listed, and those past UndoListed.
	listed, unlisted int
}

// Start says which run is undone, from where, and what is to restore.
func (u *Undo) Start(dir string, m *runlog.Manifest, todo, todoDBs int) {
	fmt.Fprintf(u.Out, "undoing run %s (%s) from %s: %s to restore\n", m.RunID, m.Created.Format("2006-01-02 15:04:05Z"), dir, report.StoresPhrase(todo, todoDBs))
	for _, n := range m.ToolNotes {
		fmt.Fprintf(u.Out, "  note: %s\n", reports.Printable(n))
	}
}

// List prints the files a --force restore would overwrite, before the question (to Err when
// Out is discarded: the person still sees what the question is about).
func (u *Undo) List(m *runlog.Manifest) {
	list := u.Out
	if list == io.Discard {
		list = u.Err // --format json: the list the question is about still reaches the person
	}
	for _, f := range m.Files {
		if !f.Restored {
			fmt.Fprintf(list, "  %s (%s changed)\n", reports.Printable(f.Ref.Path), reports.Plural(f.Edits, "name"))
		}
	}
}

// File prints one store's outcome (status: pipeline.UndoRestored, …; late: restored, then
// something failed) and adds it to Report.
func (u *Undo) File(o runlog.UndoOutcome, status string, late bool) {
	path := reports.Printable(o.Ref.Path)
	f := report.UndoFile{Path: o.Ref.Path, Kind: string(o.Ref.Kind), Names: o.Names, Status: status, Kept: o.Kept, Notes: o.Notes}
	if o.Err != nil && f.Status != pipeline.UndoAlready {
		f.Reason = o.Err.Error()
		Flush(u.Out)
	}
	if o.Move != nil {
		f.MovedFrom = o.Move.To
	}
	kept := ""
	if o.Kept != "" {
		// --force over a store that changed since the run: its later changes are not in
		// the store any more; say where they are (issue 30 finding 8).
		kept = "; it had changed since the run: what it held before this undo is kept at " + reports.Printable(o.Kept)
	}
	switch {
	case f.Status == pipeline.UndoRestored && !late && o.Move != nil:
		u.listed++ // a store moved back is always listed: it is not where the user last saw it
		fmt.Fprintf(u.Out, "  moved back %s (from %s)%s\n", path, reports.Printable(o.Move.To), kept)
	case f.Status == pipeline.UndoRestored && !late && kept == "" && len(o.Notes) == 0 && !u.Verbose && u.listed >= UndoListed:
		u.unlisted++ // counted in the closing line (issue 23 item 11: 5,000 files printed 5,002 lines)
	case f.Status == pipeline.UndoRestored && !late:
		u.listed++ // past UndoListed too when its later changes were kept aside or it has a note: the user must know
		fmt.Fprintf(u.Out, "  restored %s (%s)%s\n", path, reports.Plural(o.Names, "name"), kept)
		for _, n := range o.Notes {
			fmt.Fprintf(u.Out, "    note: %s\n", reports.Printable(n))
		}
	case late:
		// Restored, then something failed (a directory fsync) or the agent appended
		// meanwhile (carried over): reported, and the exit status says so.
		fmt.Fprintf(u.Err, "  restored %s (%s)%s, but: %s\n", path, reports.Plural(o.Names, "name"), kept, reports.Printable(o.Err.Error()))
	case f.Status == pipeline.UndoChanged || f.Status == pipeline.UndoInUse:
		fmt.Fprintf(u.Err, "  refused  %s\n", reports.Printable(o.Err.Error()))
	case f.Status == pipeline.UndoFailed:
		fmt.Fprintf(u.Err, "  failed   %s\n", reports.Printable(o.Err.Error()))
	}
	u.Report.Files = append(u.Report.Files, f)
}

// End prints the closing lines of an undo that was not declined: the summary, after the count
// of restored files not listed.
func (u *Undo) End(end *pipeline.UndoEnd) {
	if end.NothingToUndo {
		fmt.Fprintln(u.Out, reports.Printable(end.Summary))
		return
	}
	if u.unlisted > 0 {
		fmt.Fprintf(u.Out, "  … and %s restored, not listed (-v lists every file, --format json has them)\n", reports.Plural(u.unlisted, "more file"))
	}
	fmt.Fprintln(u.Out, end.Summary)
}
