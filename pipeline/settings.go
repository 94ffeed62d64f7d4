package pipeline

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/all"
	"github.com/sessionfix/sessionfix/store/qwen/settings"
)

// Settings files are not stores: scan and fix never rewrite them (stores.md §2: rules keep
// working through aliases, and rewriting one can widen or narrow what it matches). scan
// reports the rules they hold in legacy spellings, in a pass of its own beside store
// discovery: an explicit PATH named settings.json is read here (and not handed to store
// discovery, which would call it an unknown store), and a directory PATH contributes its
// settings.json (a runtime directory such as ~/.qwen) and its .qwen/settings.json (a project).

// SettingsScan is the result of the settings pass: the files read, their legacy-spelled rules,
// and an error problem per file that could not be parsed.
type SettingsScan struct {
	Files  []string
	Legacy []settings.LegacyRule
	Errors []ProblemRow
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
	for _, r := range roots {
		fi, err := os.Stat(r)
		switch {
		case err == nil && !fi.IsDir() && filepath.Base(r) == "settings.json" && all.OwnsSettings(filepath.Dir(r)):
			// Another agent's settings file given as a PATH: discovery says what it is.
		case err == nil && !fi.IsDir() && filepath.Base(r) == "settings.json":
			add(r)
			continue
		case err == nil && fi.IsDir() && all.OwnsSettings(r):
			// Another agent's config directory: its settings.json holds that agent's rules (see
			// audit --agent), not Qwen Code settings.
		case err == nil && fi.IsDir():
			for _, p := range []string{filepath.Join(r, "settings.json"), filepath.Join(r, ".qwen", "settings.json")} {
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

// SettingsScope guesses the scope of a settings file given by path: <dir>/.qwen/settings.json
// is the workspace scope of <dir>, unless <dir> is the home directory (then it is the user
// scope, as is $QWEN_HOME/settings.json); anything else is an explicit file.
func SettingsScope(path, home, globalDir string) settings.Scope {
	abs, err := filepath.Abs(path)
	if err != nil {
		return settings.ScopeExplicit
	}
	if globalDir != "" && abs == filepath.Join(globalDir, "settings.json") {
		return settings.ScopeUser
	}
	dir := filepath.Dir(abs)
	if filepath.Base(abs) == "settings.json" && filepath.Base(dir) == ".qwen" {
		if home != "" && filepath.Dir(dir) == filepath.Clean(home) {
			return settings.ScopeUser
		}
		return settings.ScopeWorkspace
	}
	return settings.ScopeExplicit
}

// ScanSettings reads each settings file and lists its rules in legacy spellings
// (settings.LegacyRules against the inventory index, nil = none). A file that cannot be
// parsed is an error problem with its line and column; the others are still read.
func ScanSettings(paths []string, env settings.Env, home string, ix *mcpname.Index) *SettingsScan {
	ss := &SettingsScan{}
	global := settings.GlobalDir(settings.DiscoverOptions{Env: env, Home: home})
	for _, p := range paths {
		f, err := settings.Load(p, SettingsScope(p, home, global), env)
		if err != nil {
			ss.Errors = append(ss.Errors, ProblemRow{Path: p, Severity: string(store.SevError), Reason: err.Error()})
			continue
		}
		ss.Files = append(ss.Files, p)
		ss.Legacy = append(ss.Legacy, settings.LegacyRules(f.Rules, ix)...)
	}
	return ss
}

// Rows are the legacy-spelled rules as report rows (scan --format json "settings_rules").
func (ss *SettingsScan) Rows() []SettingsRuleRow {
	if ss == nil {
		return nil
	}
	out := make([]SettingsRuleRow, 0, len(ss.Legacy))
	for _, l := range ss.Legacy {
		out = append(out, SettingsRuleRow{File: l.Rule.File, Line: l.Rule.Line, Column: l.Rule.Column, Key: l.Rule.Key,
			Index: l.Rule.Index, Rule: l.Rule.Literal, Reason: string(l.Reason), Owners: l.Owners,
			Registered: l.Registered, Ignored: l.Rule.Ignored, VarDependent: l.VarDependent})
	}
	return out
}

// Notes are fix's info lines about settings files: they hold legacy-spelled rules
// and are not rewritten.
func (ss *SettingsScan) Notes() []ProblemRow {
	if ss == nil {
		return nil
	}
	count := map[string]int{}
	for _, l := range ss.Legacy {
		count[l.Rule.File]++
	}
	var out []ProblemRow
	for _, f := range ss.Files {
		if n := count[f]; n > 0 {
			out = append(out, ProblemRow{Path: f, Severity: string(store.SevInfo), Reason: fmt.Sprintf(
				"%s in legacy spellings; settings are never rewritten (see sessionfix scan and sessionfix audit)", reports.Plural(n, "rule"))})
		}
	}
	return out
}
