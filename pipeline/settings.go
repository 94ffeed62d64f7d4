package pipeline

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/pipeline/report"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
)

// Settings files are not stores: scan and fix never rewrite them (stores.md §2: rules keep
// working through aliases, and rewriting one can widen or narrow what it matches). scan
// reports the rules they hold in legacy spellings, in a pass of its own beside store
// discovery (the default agent's agent.Settings; agent/all.Default): an explicit PATH named
// settings.json is read here (and not handed to store discovery, which would call it an
// unknown store), and a directory PATH contributes the settings files Settings.Files names.

// SettingsScan is the result of the settings pass: the files read, their legacy-spelled rules,
// and an error problem per file that could not be parsed.
type SettingsScan struct {
	Files  []string
	Legacy []agent.SettingsRule
	Errors []report.ProblemRow
}

// SplitSettingsRoots separates the settings files of the roots from the roots store
// discovery walks; walked counts the settings files that discovery will also meet (and
// count as "not a store") inside directory roots.
func SplitSettingsRoots(roots []string) (files, storeRoots []string, walked int) {
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	pass := all.SettingsOf(all.Default)
	for _, r := range roots {
		fi, err := os.Stat(r)
		switch {
		case pass == nil:
		case err == nil && !fi.IsDir() && filepath.Base(r) == "settings.json" && all.OwnsSettings(filepath.Dir(r)):
			// Another agent's settings file given as a PATH: discovery says what it is.
		case err == nil && !fi.IsDir() && filepath.Base(r) == "settings.json":
			add(r)
			continue
		case err == nil && fi.IsDir() && all.OwnsSettings(r):
			// Another agent's config directory: its settings.json holds that agent's rules (see
			// audit --agent), not the default agent's settings.
		case err == nil && fi.IsDir():
			for _, p := range pass.Files(r) {
				if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && !seen[p] {
					add(p)
					walked++
				}
			}
		}
		storeRoots = append(storeRoots, r)
	}
	return files, storeRoots, walked
}

// ScanSettings reads each settings file with the default agent's Settings.Scan and lists its
// rules in legacy spellings (against the inventory index, nil = none). A file that cannot be
// parsed is an error problem with its line and column; the others are still read.
func ScanSettings(paths []string, env mcpconfig.Env, home string, ix *mcpname.Index) *SettingsScan {
	ss := &SettingsScan{}
	pass := all.SettingsOf(all.Default)
	if pass == nil || len(paths) == 0 {
		return ss
	}
	res := pass.Scan(paths, env, home, ix)
	ss.Files, ss.Legacy = res.Files, res.Rules
	for _, e := range res.Errors {
		ss.Errors = append(ss.Errors, report.ProblemRow{Path: e.Path, Severity: string(store.SevError), Reason: e.Err.Error()})
	}
	return ss
}

// Rows are the legacy-spelled rules as report rows (scan --format json "settings_rules").
func (ss *SettingsScan) Rows() []report.SettingsRuleRow {
	if ss == nil {
		return nil
	}
	out := make([]report.SettingsRuleRow, 0, len(ss.Legacy))
	for _, l := range ss.Legacy {
		out = append(out, report.SettingsRuleRow{File: l.File, Line: l.Line, Column: l.Column, Key: l.Key,
			Index: l.Index, Rule: l.Rule, Reason: l.Reason, Owners: l.Owners,
			Registered: l.Registered, Ignored: l.Ignored, VarDependent: l.VarDependent})
	}
	return out
}

// Notes are fix's info lines about settings files: they hold legacy-spelled rules
// and are not rewritten.
func (ss *SettingsScan) Notes() []report.ProblemRow {
	if ss == nil {
		return nil
	}
	count := map[string]int{}
	for _, l := range ss.Legacy {
		count[l.File]++
	}
	var out []report.ProblemRow
	for _, f := range ss.Files {
		if n := count[f]; n > 0 {
			out = append(out, report.ProblemRow{Path: f, Severity: string(store.SevInfo), Reason: fmt.Sprintf(
				"%s in legacy spellings; settings are never rewritten (see sessionfix scan and sessionfix audit)", reports.Plural(n, "rule"))})
		}
	}
	return out
}
