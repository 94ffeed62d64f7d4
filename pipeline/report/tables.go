package report

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/reports"
)

// The tables scan and fix print (reports.Table, the CLI writes them as text): built here from
// the run's report, so what a run says is decided in the library and cmd only prints it.

// IdentityTable lists the raw identities (server, raw tool) the run's names stand for, with
// their records and stores.
func IdentityTable(rep *ScanReport) *reports.Table {
	t := &reports.Table{Columns: []string{"server", "raw tool", "records", "stores"}}
	for _, r := range rep.Identities {
		t.Add(r.Server, r.Tool, fmt.Sprint(r.Count), fmt.Sprint(r.Stores))
	}
	return t
}

// ClassTable counts names per class; labels splits legacy-dotted by reason (classLabel).
func ClassTable(rep *ScanReport, labels map[string]int) *reports.Table {
	t := &reports.Table{Columns: []string{"class", "names", "fix action"}}
	classes := slices.Clone(mcpname.Classes)
	for _, ci := range all.Classes() {
		classes = append(classes, ci.Class)
	}
	for _, c := range classes {
		n := rep.Classes[c]
		if n == 0 {
			continue
		}
		if c == mcpname.ClassLegacyDotted && len(labels) > 0 {
			for _, l := range slices.Sorted(maps.Keys(labels)) {
				t.Add(l, fmt.Sprint(labels[l]), ClassAction(c))
			}
			continue
		}
		t.Add(string(c), fmt.Sprint(n), ClassAction(c))
	}
	return t
}

// StoreTable lists stores one a row: path, kind, records, sites, names to rewrite and kept,
// problems.
func StoreTable(stores []StoreRow) *reports.Table {
	t := &reports.Table{Columns: []string{"store", "kind", "records", "sites", "rewrite", "kept", "problems"}}
	for _, s := range stores {
		if s.Error != "" {
			what := "unreadable"
			if s.InUse {
				what = "in use"
			}
			t.Add(s.Path, KindLabel(s.Kind, s.Profile), "-", "-", "-", "-", what)
			continue
		}
		t.Add(s.Path, KindLabel(s.Kind, s.Profile), fmt.Sprint(s.Records), fmt.Sprint(s.Sites), fmt.Sprint(s.Rewrite), fmt.Sprint(s.Kept), fmt.Sprint(s.Problems))
	}
	return t
}

// RenameTable lists old → new with counts, then the kept names, at most limit rows of
// renames (0 = all).
func RenameTable(renames, kept []RenameRow, limit int) *reports.Table {
	t := &reports.Table{Columns: []string{"old", "new", "class", "count"}}
	for i, r := range renames {
		if limit > 0 && i == limit {
			break
		}
		t.Add(r.Old.String(), r.New, ReasonLabel(r.Class, r.Reasons), fmt.Sprint(r.Count))
	}
	for _, r := range kept {
		t.Add(r.Old.String(), "(kept)", ReasonLabel(r.Class, r.Reasons), fmt.Sprint(r.Count))
	}
	return t
}

// KindTable sums the stores per agent and store kind.
func KindTable(rep *ScanReport) *reports.Table {
	type sum struct {
		stores, sites, rewrite, kept, problems, unreadable int
		records, bytes                                     int64
	}
	sums := map[[2]string]*sum{}
	for _, s := range rep.Stores {
		l := KindLabel(s.Kind, s.Profile)
		k := [2]string{agentOf(l), l}
		if sums[k] == nil {
			sums[k] = &sum{}
		}
		m := sums[k]
		m.stores++
		if s.Error != "" {
			m.unreadable++
			continue
		}
		m.sites += s.Sites
		m.rewrite += s.Rewrite
		m.kept += s.Kept
		m.problems += s.Problems
		m.records += s.Records
		m.bytes += s.Bytes
	}
	keys := slices.SortedFunc(maps.Keys(sums), func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
	t := &reports.Table{Columns: []string{"agent", "kind", "stores", "size", "records", "sites", "rewrite", "kept", "problems"}}
	for _, k := range keys {
		m := sums[k]
		probs := fmt.Sprint(m.problems)
		if m.unreadable > 0 {
			probs += fmt.Sprintf(" (+%d unreadable)", m.unreadable)
		}
		t.Add(k[0], k[1], fmt.Sprint(m.stores), HumanBytes(m.bytes), fmt.Sprint(m.records), fmt.Sprint(m.sites),
			fmt.Sprint(m.rewrite), fmt.Sprint(m.kept), probs)
	}
	return t
}

// LargestStores returns the n largest stores by size (ties by path), unreadable ones last.
func LargestStores(rows []StoreRow, n int) []StoreRow {
	out := slices.Clone(rows)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Path < out[j].Path
	})
	return out[:min(n, len(out))]
}

// KeptTable lists the kept names with why each is kept (the plan's note, else the class's
// rule), at most limit rows (0 = all).
func KeptTable(kept []RenameRow, limit int) *reports.Table {
	t := &reports.Table{Columns: []string{"kept name", "class", "count", "why"}}
	for i, r := range kept {
		if limit > 0 && i == limit {
			break
		}
		why := r.Note
		if why == "" {
			why = ClassAction(mcpname.Class(r.Class))
		}
		t.Add(r.Old.String(), ReasonLabel(r.Class, r.Reasons), fmt.Sprint(r.Count), why)
	}
	return t
}

func HumanBytes(n int64) string {
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

// agentOf is the agent a store belongs to, from its kind label: the part before the first
// "-" ("<agent>-<format>" for file kinds; the profile name for databases).
func agentOf(label string) string {
	a, _, _ := strings.Cut(label, "-")
	return a
}
