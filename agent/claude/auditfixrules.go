package claude

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/store"
)

// RuleRow is one planned rule in fix --rules output (its JSON schema).
type RuleRow struct {
	File       string   `json:"file"`
	Line       int      `json:"line"`
	Column     int      `json:"column"`
	Scope      string   `json:"scope"`
	Key        string   `json:"key"`
	Index      int      `json:"index"`
	Kind       string   `json:"kind"`
	Old        string   `json:"old"`
	New        string   `json:"new,omitempty"`
	Action     string   `json:"action"`
	WrittenFor string   `json:"written_for"`
	Before     []string `json:"matched_before"`
	After      []string `json:"matches_after"`
	Extra      []string `json:"shared_extra,omitempty"`
	Note       string   `json:"note,omitempty"`
	// Overrides: on a migrated deny or ask rule, the migrated allow rules it would override
	// (claude.ClaudeMigrationOverrides); on such an allow rule, the rules overriding it.
	Overrides []string `json:"overrides,omitempty"`
}

// FixRulesReport is fix --rules --format json.
type FixRulesReport struct {
	ClaudeVersion string       `json:"claude_version"`
	Files         []string     `json:"files"`
	Rules         []RuleRow    `json:"rules"`
	Mode          string       `json:"mode"` // dry-run or apply
	Run           string       `json:"run,omitempty"`
	Outcomes      []RuleOutRow `json:"outcomes,omitempty"`
	Errors        []string     `json:"errors"`
}

// RuleOutRow is what --apply did to one rule file.
type RuleOutRow struct {
	File   string `json:"file"`
	Status string `json:"status"` // rewritten, in-use, failed
	Rules  int    `json:"rules"`
	Reason string `json:"reason,omitempty"`
}

func toolNames(ts []mcpname.ClaudeTool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Server + "/" + t.Tool
	}
	return out
}

// RulePlan is one rule of a rule file fix --rules plans: its output row, the index of the
// rule (and of its site in the file's snapshot), and the migration as NoteOverrides takes it.
type RulePlan struct {
	Row      RuleRow
	Rule     int
	Migrated ClaudeMigratedRule
}

// Rewrite says the rule is to be rewritten to Row.New.
func (p RulePlan) Rewrite() bool { return p.Row.Action == string(MigrateRewrite) }

// PlanRuleFile plans the migration of one rule file's rules (scope: the file's) to now's
// spelling (PlanClaudeRules over tools, allowShared as --allow-shared): one RulePlan per rule
// that names a tool only in a legacy spelling. A rewrite is kept, with a note saying where to
// change it instead, for the legacy allowedTools of ~/.claude.json when now no longer reads
// them, and for managed settings (read, never written).
func PlanRuleFile(rules []Rule, scope permission.ClaudeScope, tools []mcpname.ClaudeTool, now permission.ClaudeRelease, allowShared bool) []RulePlan {
	plain := make([]permission.ClaudeRule, len(rules))
	for i, ru := range rules {
		plain[i] = ru.ClaudeRule
	}
	var out []RulePlan
	for _, m := range PlanClaudeRules(plain, tools, now, allowShared) {
		ru := rules[m.Rule]
		row := RuleRow{File: ru.File, Line: ru.Line, Column: ru.Column, Scope: string(ru.Scope), Key: ru.Key, Index: ru.Index,
			Kind: string(ru.Kind), Old: m.Old, New: m.New, Action: string(m.Action), WrittenFor: m.WrittenFor,
			Before: toolNames(m.Before), After: toolNames(m.After), Extra: toolNames(m.Extra), Note: m.Note}
		if m.Action == MigrateRewrite && scope == permission.ClaudeScopeLegacy && !permission.ClaudeFeaturesOf(now).LegacyAllowedTools {
			row.Action, row.Note = string(MigrateKeep), fmt.Sprintf("%s no longer reads allowedTools of ~/.claude.json: move the rule, as %s, into the project's .claude/settings.local.json (permissions.allow)", now, m.New)
		}
		if m.Action == MigrateRewrite && scope == permission.ClaudeScopeManaged {
			row.Action, row.Note = string(MigrateKeep), "managed settings are read, never written (their administrator owns them): change it there to "+m.New
		}
		mr := ClaudeMigratedRule{Kind: ru.Kind, ClaudeMigration: m}
		mr.Action = MigrationAction(row.Action)
		out = append(out, RulePlan{Row: row, Rule: m.Rule, Migrated: mr})
	}
	return out
}

// NoteOverrides adds to rows (parallel to ms) the migrated deny and ask rules that would override a migrated
// allow rule of the same tool under now (ClaudeMigrationOverrides), on both rows.
func NoteOverrides(rows []RuleRow, ms []ClaudeMigratedRule, now permission.ClaudeRelease) {
	at := func(r RuleRow) string {
		return fmt.Sprintf("%s rule %q → %s (%s %s:%d:%d)", r.Kind, r.Old, r.New, r.Scope, r.File, r.Line, r.Column)
	}
	for _, ov := range ClaudeMigrationOverrides(ms) {
		res, al := rows[ov.Restrict], rows[ov.Allow]
		outcome := permission.ClaudeOutcomeAsk
		if ms[ov.Restrict].Kind == permission.ClaudeDeny {
			outcome = permission.ClaudeOutcomeBlock
			if permission.ClaudeFeaturesOf(now).DenyHides {
				outcome = permission.ClaudeOutcomeNotOffered
			}
		}
		tools := ToolList(ov.Tools)
		rows[ov.Restrict].Overrides = append(rows[ov.Restrict].Overrides, fmt.Sprintf(
			"with both rewrites this rule overrides the migrated %s for %s under %s (%s wins over allow: %s); rewrite only one of them if the allow is meant to decide",
			at(al), tools, now, res.Kind, outcome))
		rows[ov.Allow].Overrides = append(rows[ov.Allow].Overrides, fmt.Sprintf(
			"overridden for %s under %s by the migrated %s (%s wins over allow: %s)", tools, now, at(res), res.Kind, outcome))
	}
}

// RuleFilePlan is one rule file's fix --rules plan: the file's store and snapshot, one decision
// per planned rule (ActRewrite with the new spelling, or ActKeep with the reason), and how many
// of them rewrite.
type RuleFilePlan struct {
	Store     *RuleStore
	Snap      *store.Snapshot
	Decisions []naming.Decision
	Rewrites  int
}

// PlanRuleFiles scans every source's rule file and plans the migration of its legacy-spelled
// rules to now's spelling for the tools (PlanRuleFile per file, NoteOverrides over all of them):
// the report (mode "dry-run", Files and Rules filled) and one RuleFilePlan per file read, in
// source order. Paths are made absolute and resolved through symbolic links (runs record
// absolute, clean paths; a linked rule file is rewritten at its target, the link kept; as root
// a link another user owns the target of is refused: owner.LinkRefusal). A
// missing file that was not given explicitly is skipped; any other file that cannot be read,
// and every problem of a read file (file:line:column: reason), goes to problem and the run
// continues.
func PlanRuleFiles(ctx context.Context, srcs []ClaudeSource, tools []mcpname.ClaudeTool, now permission.ClaudeRelease, allowShared bool, problem func(error)) (*FixRulesReport, []RuleFilePlan) {
	rep := &FixRulesReport{ClaudeVersion: now.String(), Mode: "dry-run", Files: []string{}, Rules: []RuleRow{}, Errors: []string{}}
	var plans []RuleFilePlan
	var migrated []ClaudeMigratedRule // parallel to rep.Rules
	for _, s := range srcs {
		if abs, err := filepath.Abs(s.Path); err == nil {
			s.Path = abs
		}
		// As root a link is followed only to what its owner owns (owner.Resolve): a user's
		// settings.json linked to another user's had root rewrite that user's rules.
		real, err := owner.Resolve(s.Path)
		if le := (*owner.LinkError)(nil); errors.As(err, &le) {
			problem(fmt.Errorf("%s: %w: not read, not rewritten", s.Path, err))
			continue
		}
		if err == nil {
			s.Path = real
		}
		st := OpenRules(s.Path, s.Scope)
		snap, err := st.Scan(ctx, store.ScanOptions{Hash: true})
		switch {
		case errors.Is(err, fs.ErrNotExist) && !s.Explicit:
			continue
		case err != nil:
			problem(err)
			continue
		}
		for _, pr := range snap.Problems {
			if strings.HasPrefix(pr.Reason, s.Path) { // already names file:line:column
				problem(errors.New(pr.Reason))
			} else {
				problem(fmt.Errorf("%s: %s", s.Path, pr.Reason))
			}
		}
		rs := RuleSnapshotOf(snap)
		rep.Files = append(rep.Files, s.Path)
		fp := RuleFilePlan{Store: st, Snap: snap}
		for _, rp := range PlanRuleFile(rs.Rules, s.Scope, tools, now, allowShared) {
			d := naming.Decision{Site: &snap.Sites[rp.Rule], Class: ClassClaudeLegacyRule, Source: "written for " + rp.Row.WrittenFor,
				Note: rp.Migrated.Note, Action: naming.ActKeep}
			if rp.Rewrite() {
				d.Action, d.New = naming.ActRewrite, rp.Row.New
				fp.Rewrites++
			}
			fp.Decisions = append(fp.Decisions, d)
			rep.Rules = append(rep.Rules, rp.Row)
			migrated = append(migrated, rp.Migrated)
		}
		plans = append(plans, fp)
	}
	NoteOverrides(rep.Rules, migrated, now)
	return rep, plans
}

// InventoryTools loads the inventory file at path (mcpinventory.Load) and lists its raw tools,
// server by server in key order, as the rule migration takes them.
func InventoryTools(path string) ([]mcpname.ClaudeTool, error) {
	inv, err := mcpinventory.Load(path)
	if err != nil {
		return nil, err
	}
	var tools []mcpname.ClaudeTool
	for _, k := range inv.Keys() {
		for _, t := range inv.Servers[k].Tools {
			tools = append(tools, mcpname.ClaudeTool{Server: k, Tool: t.Name})
		}
	}
	return tools, nil
}
