package report

import (
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

// ScanSARIF collects scan's SARIF results, one store plan at a time (the pipeline's callback):
// one result per name (a call stored as namespace + name, one Site.Group, once) that fix would rewrite (level
// "warning") or that is kept although a provider rejects it (naming.Decision.KeepsRejected,
// level "error"). Rule id "sessionfix/name/<class>" (mcpname and rewrite class names:
// "sessionfix/name/legacy-dotted", or a room's class); location the store
// path (reports.SARIFPath) and line, a SQLite row named in the message. The fingerprint
// (partialFingerprints "sessionfix/v1") is "scan", class, name, store and row, without the
// line: appending records keeps a finding's identity, as check's.
// Rules and Results are what Add collected, in the order of the plans given.
type ScanSARIF struct {
	Rules   []reports.SARIFRule
	seen    map[string]bool
	Results []reports.SARIFResult
}

// Add adds the results (and their rules, each once) of one store plan.
func (s *ScanSARIF) Add(sp *rewrite.StorePlan) {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	path := reports.SARIFPath(sp.Store.Ref().Path)
	for _, d := range sp.Names() {
		kept := d.KeepsRejected()
		if d.Action != naming.ActRewrite && !kept {
			continue
		}
		class := string(d.Class)
		id := "sessionfix/name/" + class
		if !s.seen[id] {
			s.seen[id] = true
			s.Rules = append(s.Rules, reports.SARIFRule{ID: id, Name: reports.SARIFRuleName("name", class),
				Short: fmt.Sprintf("a stored MCP tool name of class %s", class),
				Full: fmt.Sprintf("A tool name of class %s stored in an agent's session history: sessionfix fix rewrites it to the name the agent registers, "+
					"or keeps it (reported) when it cannot; a kept name a provider rejects still fails the session where it is sent back.", class),
				HelpURI: "https://github.com/sessionfix/sessionfix/blob/main/README.md"})
		}
		name := d.Site.DisplayName()
		where := ""
		if d.Site.Loc.Row != "" {
			where = " At " + d.Site.Loc.Row + "."
		}
		var msg, level string
		if kept {
			level = "error"
			note := d.Note
			if note == "" {
				note = "not rewritten"
			}
			msg = fmt.Sprintf("%s (%s, %s %s) is kept although a provider rejects it: %s.%s", name, class, d.Site.Kind, d.Site.Path, note, where)
		} else {
			level = "warning"
			msg = fmt.Sprintf("%s (%s, %s %s) would be rewritten by sessionfix fix to %s.%s", name, class, d.Site.Kind, d.Site.Path, d.New, where)
		}
		finding := reports.Finding{Store: sp.Store.Ref().Path, Site: SiteText(d.Site.Loc, string(d.Site.Kind), d.Site.Path), Class: class, Name: name}
		if sp.Snap != nil {
			finding.Agent = string(sp.Snap.Agent)
		}
		if !kept {
			finding.New = d.New
		}
		s.Results = append(s.Results, reports.SARIFResult{RuleID: id, Message: msg, Path: path, Line: d.Site.Loc.Line, Level: level,
			Fingerprint: reports.SARIFFingerprint("scan", class, name, path, d.Site.Loc.Row), Finding: finding})
	}
}

// SiteText is where a name site lies in its store, as the fleet database's site column says
// it: "line 3 call message.parts[0].functionCall.name" (a JSONL store), "row <key> call
// <path>" (a table store); the parts a site lacks are left out.
func SiteText(loc store.Loc, kind, path string) string {
	var parts []string
	switch {
	case loc.Row != "":
		parts = append(parts, "row "+loc.Row)
	case loc.Line > 0:
		parts = append(parts, fmt.Sprintf("line %d", loc.Line))
	}
	for _, p := range []string{kind, path} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}
