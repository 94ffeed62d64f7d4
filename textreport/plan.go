package textreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
)

// PlanSummary says to w (fix --apply --plan path: lp read from it), before anything is read or asked, what the plan file is: who wrote it
// (the file's owner: another user's plan carries no profile or inventory and, as root, is
// applied only to that user's files), when, and every option it carries, as the plan records
// them (docs/plan.md; issue 30 finding 2).
func PlanSummary(w io.Writer, path string, lp *pipeline.LoadedPlan) {
	who := "you"
	if lp.Foreign {
		who = owner.Describe(lp.Author) + ", not you: it may not carry a profile or an inventory"
		if lp.Options.StoresOwnedBy != nil {
			who += ", and only that user's files are rewritten"
		}
	}
	names := 0
	for _, ps := range lp.Planned {
		names += ps.Names
	}
	fmt.Fprintf(w, "plan %s: written %s by %s; %s in %s; options: %s\n", reports.Printable(path),
		lp.Created.UTC().Format("2006-01-02 15:04:05Z"), who, reports.Plural(names, "name"), reports.Plural(len(lp.Paths), "store"), planOptionList(lp.Recorded))
}

// planOptionList is every option a plan carries, in the plan's order: "name value" pairs
// (a list joined by commas) separated by "; ", or "none".
func planOptionList(o rewrite.PlanOptions) string {
	b, err := json.Marshal(o)
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return "none"
	}
	var parts []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			break
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			break
		}
		var val string
		switch x := v.(type) {
		case string:
			val = reports.Printable(x)
		case []any:
			var items []string
			for _, it := range x {
				items = append(items, reports.Printable(fmt.Sprint(it)))
			}
			val = strings.Join(items, ",")
		default:
			val = fmt.Sprint(x)
		}
		parts = append(parts, fmt.Sprintf("%v %s", k, val))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}
