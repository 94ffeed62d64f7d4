package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/settings"
)

// Settings files are not stores: scan and fix never rewrite them (stores.md §2: rules keep
// working through aliases, and rewriting one can widen or narrow what it matches). scan
// reports the rules they hold in legacy spellings, in a pass of its own beside store
// discovery: an explicit PATH named settings.json is read here (and not handed to store
// discovery, which would call it an unknown store), and a directory PATH contributes its
// settings.json (a runtime directory such as ~/.qwen) and its .qwen/settings.json (a project).

// settingsScan is the result of the settings pass.
type settingsScan struct {
	Files  []string
	Legacy []settings.LegacyRule
	Errors []problemRow
}

// splitSettingsRoots separates the settings files of the roots from the roots store
// discovery walks; walked counts the settings files that discovery will also meet (and
// count as "not a store") inside directory roots.
func splitSettingsRoots(roots []string) (files, storeRoots []string, walked int) {
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
		case err == nil && !fi.IsDir() && filepath.Base(r) == "settings.json":
			add(r)
			continue
		case err == nil && fi.IsDir() && isClaudeConfigDir(r):
			// A Claude Code config directory: its settings.json holds Claude Code rules (see
			// audit --agent claude), not Qwen Code settings.
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

// settingsScope guesses the scope of a settings file given by path: <dir>/.qwen/settings.json
// is the workspace scope of <dir>, unless <dir> is the home directory (then it is the user
// scope, as is $QWEN_HOME/settings.json); anything else is an explicit file.
func settingsScope(path, home, globalDir string) settings.Scope {
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

// scanSettings reads each settings file and lists its rules in legacy spellings
// (settings.LegacyRules against the inventory index, nil = none). A file that cannot be
// parsed is an error problem with its line and column; the others are still read.
func scanSettings(paths []string, env settings.Env, home string, ix *mcpname.Index) *settingsScan {
	ss := &settingsScan{}
	global := settings.GlobalDir(settings.DiscoverOptions{Env: env, Home: home})
	for _, p := range paths {
		f, err := settings.Load(p, settingsScope(p, home, global), env)
		if err != nil {
			ss.Errors = append(ss.Errors, problemRow{Path: p, Severity: string(store.SevError), Reason: err.Error()})
			continue
		}
		ss.Files = append(ss.Files, p)
		ss.Legacy = append(ss.Legacy, settings.LegacyRules(f.Rules, ix)...)
	}
	return ss
}

func (ss *settingsScan) rows() []settingsRuleRow {
	if ss == nil {
		return nil
	}
	out := make([]settingsRuleRow, 0, len(ss.Legacy))
	for _, l := range ss.Legacy {
		out = append(out, settingsRuleRow{File: l.Rule.File, Line: l.Rule.Line, Column: l.Rule.Column, Key: l.Rule.Key,
			Index: l.Rule.Index, Rule: l.Rule.Literal, Reason: string(l.Reason), Owners: l.Owners,
			Registered: l.Registered, Ignored: l.Rule.Ignored, VarDependent: l.VarDependent})
	}
	return out
}

// settingsTable is the text table of legacy-spelled settings rules.
func settingsTable(rows []settingsRuleRow) *reports.Table {
	t := &reports.Table{Columns: []string{"where", "key", "rule", "reason", "current name"}}
	for _, r := range rows {
		reason := r.Reason
		if r.Ignored != "" {
			reason += " (not in effect)"
		}
		current := strings.Join(r.Registered, ", ")
		if r.VarDependent {
			current = "(depends on $VAR values; not shown)"
		}
		t.Add(fmt.Sprintf("%s:%d:%d", r.File, r.Line, r.Column), fmt.Sprintf("%s[%d]", r.Key, r.Index), r.Rule, reason, current)
	}
	return t
}

// settingsNotes are fix's info lines about settings files: they hold legacy-spelled rules
// and are not rewritten.
func (ss *settingsScan) notes() []problemRow {
	if ss == nil {
		return nil
	}
	count := map[string]int{}
	for _, l := range ss.Legacy {
		count[l.Rule.File]++
	}
	var out []problemRow
	for _, f := range ss.Files {
		if n := count[f]; n > 0 {
			out = append(out, problemRow{Path: f, Severity: string(store.SevInfo), Reason: fmt.Sprintf(
				"%s in legacy spellings; settings are never rewritten (see sessionfix scan and sessionfix audit)", plural(n, "rule"))})
		}
	}
	return out
}

// isClaudeConfigDir reports whether dir is a Claude Code config directory (~/.claude or a copy):
// named .claude, or holding session files directly under projects/<dir>/ (Qwen Code keeps its
// sessions one level deeper, in projects/<id>/chats/).
func isClaudeConfigDir(dir string) bool {
	if filepath.Base(filepath.Clean(dir)) == ".claude" {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(dir, "projects", "*", "*.jsonl"))
	return len(m) > 0
}
