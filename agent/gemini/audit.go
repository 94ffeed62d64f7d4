package gemini

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/mcpname"
	rulesgemini "github.com/sessionfix/sessionfix/permission/gemini"
	"github.com/sessionfix/sessionfix/permission/rules"
)

// The Gemini CLI rule audit (issue 25 item 4) on the shared rule-audit layer: this file finds
// the rule files and the tools; permission/gemini knows what each release does with them; the
// engine (package audit) evaluates and reports.

// The audit's own option names (VersionOption is the release whose rules are "now").
const (
	BeforeOption       = "before"
	ApprovalModeOption = "approval-mode"
)

// DefaultBefore is the release compared against when --before is not given and the sessions do
// not say: the last release before 0.33.0's mcp_ names.
const DefaultBefore = "0.32.1"

// auditOptions are the audit's own options (every one refused by another agent's audit).
var auditOptions = []agent.Option{
	{Name: VersionOption, Usage: "with --agent gemini: the release whose rules are \"now\" (default: the newest known, " + mcpname.GeminiLatestVersion + ")"},
	{Name: BeforeOption, Usage: "with --agent gemini: the release compared against (default: " + DefaultBefore + " when the sessions, or the names fix runs of --state-dir replaced in them, hold names of 0.32.x or earlier, or none)"},
	{Name: ApprovalModeOption, Usage: "with --agent gemini: the approval mode the rules run in (default, auto_edit or yolo; Gemini CLI's own flag)", Value: "default"},
}

// Audit is audit --agent gemini (agent.Audit on the shared layer: Rules).
var Audit = &agent.Audit{Reads: "Gemini CLI settings.json and policies/*.toml",
	Flags: agent.OptionNames(auditOptions), Options: auditOptions,
	Rules: auditRules,
	Home:  func(env agent.Env) string { return Home(env.Getenv, env.Home) },
	Description: `

With --agent gemini, audit reads Gemini CLI's rule files: settings.json (user ~/.gemini,
workspace .gemini/ of --project or the current directory, system) tools.exclude,
tools.allowed, tools.core, tools.confirmationRequired, the v1 excludeTools,
mcpServers.<s>.includeTools/excludeTools, and policies/*.toml (user, workspace), and
says per tool what --gemini-version (now) and --before do with it, headless, under
--approval-mode: hidden, denied, ask or ran. A deny written server__tool stopped denying
at 0.33.0: it is listed first as lost (--fail-on lost exits 5). A PATH is a copied
~/.gemini (user scope) or a project directory (its .gemini/, workspace scope). Tools
come from --inventory or --discover.`,
}

// auditRules reads the rule files and tools of the audit's inputs and binds them to the two
// releases (rulesgemini.AuditEvaluation).
func auditRules(ctx context.Context, in agent.AuditInput) (*rules.Audit, error) {
	if in.ModeSet {
		return nil, usage.Errorf("--mode is not Gemini CLI's approval mode: give --%s (default, auto_edit or yolo)", ApprovalModeOption)
	}
	now, err := agent.OptionValue(in.Options, VersionOption, mcpname.GeminiLatestVersion, rulesgemini.ParseRelease)
	if err != nil {
		return nil, err
	}
	mode, err := agent.OptionValue(in.Options, ApprovalModeOption, "default", rulesgemini.ParseMode)
	if err != nil {
		return nil, err
	}
	a := &rules.Audit{ID: string(ID), Name: agentName, Words: rulesgemini.Words}
	files, err := auditFiles(in)
	if err != nil {
		return nil, err
	}
	c := rulesgemini.Config{Release: now, Mode: mode}
	var servers []agent.Server
	for _, f := range files {
		data, _, err := owner.ReadFile(f.path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !f.given:
			continue
		case err != nil:
			a.Problems = append(a.Problems, fmt.Sprintf("%s: %v", f.path, err))
			continue
		}
		a.Read = append(a.Read, f.path)
		if f.policy {
			pf := rulesgemini.ParsePolicy(f.path, data, f.scope)
			c.Policies = append(c.Policies, pf)
			a.Files = append(a.Files, rules.File{Path: f.path, Scope: string(f.scope), Rules: len(pf.Rules)})
			continue
		}
		sf, err := rulesgemini.ParseSettings(f.path, data, f.scope)
		if err != nil {
			a.Problems = append(a.Problems, err.Error()+" (Gemini CLI ignores the file)")
			continue
		}
		c.Settings = append(c.Settings, sf)
		a.Files = append(a.Files, rules.File{Path: f.path, Scope: string(f.scope),
			Rules: len(sf.Exclude) + len(sf.Allowed) + len(sf.Core) + len(sf.Confirm) + len(sf.LegacyExclude)})
		ss, _, err := mcpconfig.Read(f.path, mcpconfig.Options{Agent: agentName,
			Expand: func(s string) string { return mcpconfig.Expand(s, in.Engine.Vars, nil) }})
		if err == nil {
			servers = append(servers, ss...)
		}
	}
	order := serverOrder(c.Settings)
	inv, err := agent.AuditInventory(ctx, in, a, servers, "Gemini CLI MCP server configured (no mcpServers in the settings read)",
		"Gemini CLI's settings name servers, not their tools")
	if err != nil {
		return nil, err
	}
	if inv != nil {
		c.Tools = inventoryTools(inv, order)
	}
	before, why, err := beforeRelease(ctx, in, &a.Problems)
	if err != nil {
		return nil, err
	}
	if why != "" {
		a.Notes = append(a.Notes, why)
	}
	a.Eval = rulesgemini.AuditEvaluation(c, now, before)
	for i := range a.Eval.Tools {
		a.Eval.Tools[i].Source = a.Inventory
		if in.Inventory != "" {
			a.Eval.Tools[i].Source = "file"
		}
	}
	a.Facts = []rules.Fact{{Key: "approval_mode", Label: "approval mode", Value: string(mode), Summary: true},
		{Key: "run", Label: "run", Value: "headless (-p)"}}
	return a, nil
}

// auditFile is one rule file to read: its path, scope, whether it is a policy file, and given:
// named on the command line (a missing one is a problem, not skipped).
type auditFile struct {
	path   string
	scope  rulesgemini.Scope
	policy bool
	given  bool
}

// NoProject is --project's value that reads no workspace settings.
const NoProject = "none"

// sameDir reports whether a and b are the same existing directory (os.SameFile).
func sameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// auditFiles lists the rule files of the audit's inputs: a PATH that is a Gemini CLI home (or
// holds settings.json or policies/ itself: a copy) is read as the user's; another directory as a
// project (its .gemini/, workspace scope). Without a PATH: the environment's home, the workspace
// of --project (else the current directory) and the system settings. --settings adds files
// (SCOPE=FILE: user, workspace, system, system-defaults; a bare FILE is user).
func auditFiles(in agent.AuditInput) ([]auditFile, error) {
	var out []auditFile
	var homes []string
	home := func(dir string, given bool) {
		homes = append(homes, dir)
		out = append(out, auditFile{path: filepath.Join(dir, "settings.json"), scope: rulesgemini.ScopeUser, given: given})
		out = append(out, policyFiles(filepath.Join(dir, "policies"), rulesgemini.ScopeUser)...)
	}
	workspace := func(dir string) {
		if dir == NoProject {
			return
		}
		g := filepath.Join(dir, ".gemini")
		if slices.ContainsFunc(homes, func(h string) bool { return sameDir(h, g) }) {
			// The project is the home directory itself (cron's working directory): Gemini CLI
			// reads workspace settings only when the workspace is not the home directory
			// (settings.ts: realWorkspaceDir !== realHomeDir), so its .gemini is the user's.
			return
		}
		out = append(out, auditFile{path: filepath.Join(g, "settings.json"), scope: rulesgemini.ScopeWorkspace})
		out = append(out, policyFiles(filepath.Join(g, "policies"), rulesgemini.ScopeWorkspace)...)
	}
	for _, p := range in.Paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		switch {
		case !fi.IsDir():
			return nil, usage.Errorf("audit --agent gemini: %s is not a directory (give a settings file with --settings)", p)
		case IsHome(p) || exists(filepath.Join(p, "settings.json")) || exists(filepath.Join(p, "policies")):
			home(p, false)
		case exists(filepath.Join(p, ".gemini")):
			workspace(p)
		default:
			return nil, usage.Errorf("audit --agent gemini: %s is neither a Gemini CLI home (settings.json, policies/) nor a project with a .gemini directory", p)
		}
	}
	if len(in.Paths) == 0 {
		home(Home(in.Engine.Env.Getenv, in.Engine.Env.Home), false)
		workspace(cmp.Or(in.Project, in.Cwd))
		out = append(out, auditFile{path: SystemDefaultsPath(in.Engine.Env.Getenv), scope: rulesgemini.ScopeSystemDefaults},
			auditFile{path: SystemSettingsPath(in.Engine.Env.Getenv), scope: rulesgemini.ScopeSystem})
	} else if in.Project != "" {
		workspace(in.Project)
	}
	for _, s := range in.Settings {
		scope, file, ok := strings.Cut(s, "=")
		if !ok {
			scope, file = string(rulesgemini.ScopeUser), s
		}
		sc := rulesgemini.Scope(scope)
		if !slices.Contains([]rulesgemini.Scope{rulesgemini.ScopeUser, rulesgemini.ScopeWorkspace, rulesgemini.ScopeSystem, rulesgemini.ScopeSystemDefaults}, sc) {
			return nil, usage.Errorf("--settings %s: the scope must be user, workspace, system or system-defaults", s)
		}
		out = append(out, auditFile{path: file, scope: sc, given: true, policy: strings.HasSuffix(file, ".toml")})
	}
	return dedupFiles(out), nil
}

// dedupFiles keeps the first of files that name the same file (the workspace of a project
// that is the home directory is the home's .gemini: Gemini CLI then reads it once, as the
// user's).
func dedupFiles(files []auditFile) []auditFile {
	seen := map[string]bool{}
	out := files[:0:0]
	for _, f := range files {
		k := f.path
		if abs, err := filepath.Abs(k); err == nil {
			k = abs
		}
		if real, err := filepath.EvalSymlinks(k); err == nil {
			k = real
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, f)
	}
	return out
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// policyFiles are the *.toml files of dir, sorted (Gemini CLI reads them in that order).
func policyFiles(dir string, scope rulesgemini.Scope) []auditFile {
	m, _ := filepath.Glob(filepath.Join(dir, "*.toml"))
	sort.Strings(m)
	out := make([]auditFile, len(m))
	for i, f := range m {
		out[i] = auditFile{path: f, scope: scope, policy: true}
	}
	return out
}

// serverOrder is the order the settings list mcpServers in (the order Gemini CLI registers
// them), each key once.
func serverOrder(settings []*rulesgemini.SettingsFile) []string {
	var out []string
	for _, f := range settings {
		for _, s := range f.Servers {
			if !slices.Contains(out, s.Key) {
				out = append(out, s.Key)
			}
		}
	}
	return out
}

// inventoryTools are inv's tools, servers in order first (then the others, sorted), each
// server's tools in the inventory's order.
func inventoryTools(inv *mcpinventory.Inventory, order []string) []rulesgemini.Tool {
	var out []rulesgemini.Tool
	for _, t := range inv.InOrder(order) {
		out = append(out, rulesgemini.Tool{Server: t.Server, Name: t.Tool})
	}
	return out
}

// beforeRelease is --before, or the release the sessions say (inferBefore over the PATHs, or
// the environment's home, with the engine's stored names and recorded renames).
func beforeRelease(ctx context.Context, in agent.AuditInput, problems *[]string) (rulesgemini.Release, string, error) {
	if v := in.Options.String(BeforeOption); v != "" {
		r, err := rulesgemini.ParseRelease(v)
		if err != nil {
			return rulesgemini.Release{}, "", usage.Errorf("--%s: %v", BeforeOption, err)
		}
		return r, "", nil
	}
	roots := in.Paths
	if len(roots) == 0 {
		roots = []string{Home(in.Engine.Env.Getenv, in.Engine.Env.Home)}
	}
	r, why, errs := inferBefore(ctx, roots, in.Engine.StoredNames, in.Engine.Renames)
	for _, e := range errs {
		*problems = append(*problems, e.Error())
	}
	return r, why, nil
}

// inferBefore is the release the rules were written for when --before is not given: the OLDEST
// naming era evidenced by the session names stored under roots' tmp/ directories, each read as
// every name a fix run of the state directory recorded it replaced (renames; issue 23 item 2: a
// repair must not move the baseline, or a lost deny hides). A name of the bare-name era (no
// mcp_ prefix, not a built-in) gives DefaultBefore (0.32.1); only mcp_ names give 0.33.2; no
// name at all gives DefaultBefore. why says which, and from what (names stored, or recorded
// by fix runs). storedNames or renames nil: not read. errs are the fix runs that could not be
// read (their renames are not known: the caller reports them).
func inferBefore(ctx context.Context, roots []string, storedNames func(context.Context, []string) ([]string, []error), renames func() (*agent.Renames, []error)) (_ rulesgemini.Release, why string, errs []error) {
	var names []string
	if storedNames != nil {
		var existing []string
		for _, r := range roots {
			if exists(filepath.Join(r, "tmp")) {
				existing = append(existing, filepath.Join(r, "tmp"))
			}
		}
		if len(existing) > 0 {
			names, _ = storedNames(ctx, existing)
		}
	}
	var rn *agent.Renames
	if renames != nil {
		rn, errs = renames()
	}
	var old, recorded []string // names of the bare-name era: stored as written; recorded by a fix run
	qualified := 0
	for _, stored := range names {
		for _, n := range rn.OldNames(stored) {
			switch {
			case strings.HasPrefix(n, "mcp_"):
				qualified++
			case strings.Contains(n, "__") || !isBuiltin(n):
				if n != stored {
					recorded = append(recorded, n+" (now "+stored+")")
				} else {
					old = append(old, n)
				}
			}
		}
	}
	switch {
	case len(old) > 0: // names of the old era still stored as written
		return rulesgemini.MustRelease(DefaultBefore), fmt.Sprintf("--before not given: %s, inferred from the sessions (they hold names of 0.32.x or earlier, such as %s)", DefaultBefore, old[0]), errs
	case len(recorded) > 0:
		return rulesgemini.MustRelease(DefaultBefore), fmt.Sprintf("--before not given: %s, inferred from the sessions as they were before sessionfix renamed them (%s; names of 0.32.x or earlier, such as %s)", DefaultBefore, rn.From(), recorded[0]), errs
	case qualified > 0:
		from := ""
		if rn.From() == "" {
			from = "; no fix run of the state directory recorded renaming them"
		}
		return rulesgemini.MustRelease("0.33.2"), "--before not given: 0.33.2, inferred from the sessions (they hold only mcp_ names, 0.33.0 and later" + from + "; give --before if the rules are older)", errs
	}
	return rulesgemini.MustRelease(DefaultBefore), fmt.Sprintf("--before not given and no session names found: %s, the last release before the mcp_ names", DefaultBefore), errs
}

// isBuiltin reports whether n is one of Gemini CLI's built-in tool names (never an MCP
// tool's), so it says nothing of the naming era.
func isBuiltin(n string) bool {
	switch n {
	case "read_file", "write_file", "replace", "run_shell_command", "list_directory", "glob", "search_file_content",
		"grep_search", "google_web_search", "web_fetch", "read_many_files", "save_memory", "write_todos", "activate_skill",
		"codebase_investigator", "ask_user", "enter_plan_mode", "exit_plan_mode", "complete_task":
		return true
	}
	return false
}
