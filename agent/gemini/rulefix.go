package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/mcpname"
	rulesgemini "github.com/sessionfix/sessionfix/permission/gemini"
	"github.com/sessionfix/sessionfix/store"
)

// ProjectOption is fix --rules --agent gemini's --project (the project whose .gemini/ is
// migrated; one flag with another migration's --project).
const ProjectOption = "project"

// RuleFix is Gemini CLI's rule migration as fix --rules --agent gemini offers it (issue 25 item
// 5): every rule of settings.json and policies/*.toml that matched its tools under --before but
// matches other tools (or none) under --gemini-version is rewritten, byte for byte, to the
// spelling permission/gemini's PlanMigration computes (mcpName + the sanitized toolName for a
// policy rule, the declared mcp_<server>_<tool> name in a settings list); a rewrite that would
// match a tool the rule did not mean is held back and said (never widen). The edits are written
// by the engine's rule-file store (engine/rulefile).
var RuleFix = &agent.RuleFix{
	What:  "the Gemini CLI rule migration",
	Rules: "Gemini CLI rules",
	Usage: "with --agent gemini: Gemini CLI's settings.json tool lists and policies/*.toml rules",
	Options: []agent.Option{
		{Name: VersionOption, Usage: "with --rules --agent gemini: the release the rules are migrated to (default: " + mcpname.GeminiLatestVersion + ")"},
		{Name: BeforeOption, Usage: "with --rules --agent gemini: the release the rules were written for, whose meaning is kept (default: inferred as audit's: " + DefaultBefore + " unless the sessions hold only mcp_ names no fix run wrote)"},
		{Name: ApprovalModeOption, Usage: "with --rules --agent gemini: the approval mode the rules run in (default, auto_edit or yolo)"},
		{Name: ProjectOption, File: true, Usage: "with --rules --agent gemini: the project whose .gemini/settings.json and .gemini/policies/ are migrated (default: the current directory)"},
	},
	Plan: planRuleFix,
	Help: `

GEMINI CLI RULES (--rules --agent gemini): from 0.33.0 every MCP tool is named
mcp_<server>_<tool>, and a rule written server__tool (tools.exclude, tools.allowed,
tools.core, a policy's toolName) matches nothing: a deny stops denying. fix --rules
--agent gemini --inventory FILE plans, for every rule of settings.json (user
~/.gemini or a PATH, workspace .gemini/ of --project or the current directory) and
policies/*.toml whose tools under --gemini-version differ from those it matched under
--before, the spelling that matches the same raw tools: in a policy mcpName =
"<server>" and the sanitized toolName (an mcpName line is added above toolName), in
a settings list the declared mcp_<server>_<tool> name. A rewrite that would match a
tool the rule did not mean is held back and said (never widen), as is a rule of the
system settings (read, never written) or of a file the release rejects. With --apply
only the rule's string bytes change (JSONC and TOML comments, layout and every
other byte kept), with backups in a run that sessionfix undo restores.`,
}

// planRuleFix is RuleFix.Plan: the rule files of the PATHs or of the home, --project and
// the system (auditFiles), the inventory's tools in the settings' server order,
// PlanMigration from --before to --gemini-version under --approval-mode, and per file the
// byte edits of the rewrites that are made.
func planRuleFix(ctx context.Context, in agent.RuleFixInput) (*agent.RuleFixPlan, error) {
	now, err := agent.OptionValue(in.Options, VersionOption, mcpname.GeminiLatestVersion, rulesgemini.ParseRelease)
	if err != nil {
		return nil, err
	}
	var before rulesgemini.Release
	if beforeText := in.Options.String(BeforeOption); beforeText != "" {
		if before, err = rulesgemini.ParseRelease(beforeText); err != nil {
			return nil, usage.Errorf("--%s: %v", BeforeOption, err)
		}
	} else {
		// The audit's inference (issue 23 item 2): the oldest era of the sessions and of the
		// names fix runs replaced in them, so a migration after a session repair keeps 0.32.1.
		roots := in.Paths
		if len(roots) == 0 {
			roots = []string{Home(in.Env.Getenv, in.Env.Home)}
		}
		var why string
		var errs []error
		before, why, errs = inferBefore(ctx, roots, in.StoredNames, in.Renames)
		for _, e := range errs {
			in.Warn(e.Error())
		}
		in.Note(why + ": the rules are taken as written for Gemini CLI " + before.String())
	}
	mode, err := agent.OptionValue(in.Options, ApprovalModeOption, "default", rulesgemini.ParseMode)
	if err != nil {
		return nil, err
	}
	files, err := auditFiles(agent.AuditInput{Paths: in.Paths, Project: in.Options.String(ProjectOption), Cwd: in.Cwd, Engine: agent.AuditEngine{Env: in.Env}})
	if err != nil {
		return nil, err
	}
	inv, err := mcpinventory.Load(in.Inventory)
	if err != nil {
		return nil, err
	}
	m := rulesgemini.Migration{From: before, To: now, Mode: mode}
	var read []string
	for _, f := range files {
		path := f.path
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		// A linked rule file is rewritten at its target, the link kept; as root only a link
		// whose owner owns the target is followed (owner.Resolve), and the file is read as a
		// config is (owner.ReadFile: no FIFO waited on, a regular file only).
		real, err := owner.Resolve(path)
		if le := (*owner.LinkError)(nil); errors.As(err, &le) {
			in.Problem(fmt.Errorf("%s: %w: not read, not rewritten", path, err))
			continue
		}
		if err == nil {
			path = real
		}
		data, _, err := owner.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !f.given:
			continue
		case err != nil:
			in.Problem(fmt.Errorf("%s: %w", path, err))
			continue
		}
		read = append(read, path)
		if f.policy {
			pf := rulesgemini.ParsePolicy(path, data, f.scope)
			if pf.SyntaxError != nil {
				in.Problem(pf.SyntaxError)
			}
			m.Policies = append(m.Policies, pf)
			continue
		}
		sf, err := rulesgemini.ParseSettings(path, data, f.scope)
		if err != nil {
			in.Problem(fmt.Errorf("%w (Gemini CLI ignores the file; its rules are not migrated)", err))
			continue
		}
		m.Settings = append(m.Settings, sf)
	}
	m.Tools = inventoryTools(inv, serverOrder(m.Settings))
	rws := rulesgemini.PlanMigration(m)
	plan := MigrationPlan(m, rws)
	out := &agent.RuleFixPlan{Version: now.String(), Changes: plan.Changes, Edits: plan.Files}
	agent.SetRuleFixReport(out, string(ID), before.String(), read)
	return out, nil
}

// Migration is a planned Gemini CLI rule migration as fix --rules takes it: one change per rule
// PlanMigration concerns (made or held, with why) and the byte edits of every file with a
// rewrite made.
type Migration struct {
	Changes []agent.RuleChange
	Files   []agent.RuleFileEdits
}

// MigrationPlan turns PlanMigration's rewrites of m into fix --rules' changes and file edits. A
// rewrite is held back (and said) on top of PlanMigration's own reasons when its rule is in the
// system settings or system defaults (their administrator's: read, never written), or when the
// rewrites of its file together do not make a file Gemini CLI reads (overlapping edits, a
// result that does not parse): then every rewrite of that file is held.
func MigrationPlan(m rulesgemini.Migration, rws []*rulesgemini.Rewrite) Migration {
	var out Migration
	byFile := map[string][]int{} // the changes of each file with edits, in order
	var order []string
	edits := map[int][]rulesgemini.Edit{}
	for _, rw := range rws {
		ref := rw.Rule
		c := agent.RuleChange{File: ref.Pos.File, Line: ref.Pos.Line, Column: ref.Pos.Col, Scope: string(ref.Scope), Old: rw.Old,
			WrittenFor: before(m), Before: toolNames(rw.Intended), After: toolNames(rw.After), Note: rw.Why}
		switch {
		case ref.Policy != nil:
			c.Key, c.Index = "rule", ref.Policy.Index
		case ref.Entry != nil:
			c.Key, c.Index, c.Old = ref.Entry.Key, ref.Entry.Index, ref.Entry.Value
		}
		c.Action = "held"
		if !rw.Held {
			if ref.Scope == rulesgemini.ScopeSystem || ref.Scope == rulesgemini.ScopeSystemDefaults {
				c.Note = fmt.Sprintf("the %s settings are read, never written (their administrator owns them): change it there to %s", ref.Scope, rw.New)
			} else {
				c.Action, c.Rewrite, c.New = "rewrite", true, newText(ref, rw.New)
				i := len(out.Changes)
				edits[i] = rw.Edits
				if _, ok := byFile[rw.File]; !ok {
					order = append(order, rw.File)
				}
				byFile[rw.File] = append(byFile[rw.File], i)
			}
		}
		out.Changes = append(out.Changes, c)
	}
	for _, path := range order {
		data, scope, policy := fileData(m, path)
		var all []rulesgemini.Edit
		var labels []string
		for _, i := range byFile[path] {
			for _, e := range edits[i] {
				all = append(all, e)
				labels = append(labels, editLabel(out.Changes[i], e))
			}
		}
		why := checkEdits(path, data, scope, policy, all)
		if why != "" {
			for _, i := range byFile[path] {
				c := &out.Changes[i]
				c.Action, c.Rewrite, c.Note = "held", false, why
			}
			continue
		}
		fe := agent.RuleFileEdits{Path: path, Rules: len(byFile[path])}
		idx := make([]int, len(all))
		for k := range idx {
			idx[k] = k
		}
		sort.SliceStable(idx, func(a, b int) bool { return all[idx[a]].Start < all[idx[b]].Start })
		for _, k := range idx {
			e := all[k]
			fe.Edits = append(fe.Edits, store.FileEdit{At: int64(e.Start), Old: string(data[e.Start:e.End]), New: e.New})
			fe.Labels = append(fe.Labels, labels[k])
		}
		out.Files = append(out.Files, fe)
	}
	return out
}

// newText is a rewrite's new spelling as a user reads the rule: a policy rule's text
// ("mcpName = …, toolName = …"), a settings entry's value (several: the JSON strings that replace
// it).
func newText(ref *rulesgemini.RuleRef, text string) string {
	if ref.Entry == nil || ref.Policy != nil {
		return text
	}
	text = strings.TrimPrefix(text, ref.Entry.Key+": ")
	var v string
	if err := json.Unmarshal([]byte(text), &v); err == nil {
		return v
	}
	return text
}

func before(m rulesgemini.Migration) string { return m.From.String() }

// editLabel names an edit's rule in the run's record: "tools.exclude[1]", "rule 1 mcpName".
func editLabel(c agent.RuleChange, e rulesgemini.Edit) string {
	if c.Key != "rule" {
		return fmt.Sprintf("%s[%d]", c.Key, c.Index)
	}
	if e.Start == e.End {
		return fmt.Sprintf("rule %d mcpName", c.Index+1)
	}
	return fmt.Sprintf("rule %d toolName", c.Index+1)
}

// fileData is the bytes, scope and kind of the rule file at path as m read it.
func fileData(m rulesgemini.Migration, path string) ([]byte, rulesgemini.Scope, bool) {
	for _, p := range m.Policies {
		if p.Path == path {
			return p.Data, p.Scope, true
		}
	}
	for _, s := range m.Settings {
		if s.Path == path {
			return s.Data, s.Scope, false
		}
	}
	return nil, "", false
}

// checkEdits is why the edits of one file cannot be made together ("" when they can): they
// overlap, or the file they make does not read as a settings file or a policy file.
func checkEdits(path string, data []byte, scope rulesgemini.Scope, policy bool, edits []rulesgemini.Edit) string {
	if data == nil {
		return "the file was not read"
	}
	nd, err := rulesgemini.ApplyEdits(data, edits)
	if err != nil {
		return "its file's rewrites cannot be made together: " + err.Error()
	}
	if policy {
		if pf := rulesgemini.ParsePolicy(path, nd, scope); pf.SyntaxError != nil {
			return "its file's rewrites together do not read back: " + pf.SyntaxError.Error()
		}
		return ""
	}
	if _, err := rulesgemini.ParseSettings(path, nd, scope); err != nil {
		return "its file's rewrites together do not read back: " + err.Error()
	}
	return ""
}

func toolNames(ts []rulesgemini.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Server + "/" + t.Name
	}
	return out
}
