package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/audit"
	"github.com/sessionfix/sessionfix/inventory"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/claude"
	"github.com/sessionfix/sessionfix/store/jsonl"
)

// claudeAuditFlags are audit's flags for --agent claude (new values each call: --mcp-config's
// repeatable value must not carry over from one command line to the next).
func claudeAuditFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "agent", Value: "qwen", Usage: "whose rules to audit: qwen (Qwen Code settings) or claude (Claude Code rule files)"},
		&cli.StringFlag{Name: "claude-version", Usage: "with --agent claude: the release whose rule semantics are \"now\" (default: the newest known, " + mcpname.ClaudeLatestVersion + ")"},
		&cli.StringFlag{Name: "before", Usage: "with --agent claude: the release compared against (default: the oldest \"version\" in the project's sessions)"},
		&cli.StringFlag{Name: "project-key", Usage: "with --agent claude: the project directory as Claude Code saw it (its key in ~/.claude.json; default: --project, or the only project of a copied ~/.claude.json)"},
		&cli.StringFlag{Name: "claude-json", Usage: "with --agent claude: the ~/.claude.json to read trust, legacy allowedTools and MCP server keys from", TakesFile: true},
		&cli.GenericFlag{Name: "mcp-config", Value: &repeatable{}, Usage: "with --agent claude: a Claude Code MCP config file ({\"mcpServers\": {…}}, the format of claude --mcp-config and .mcp.json; repeatable): its server keys name raw tools of the sessions' stored names, and with --discover its servers are listed", TakesFile: true},
	}
}

// claudeAuditOptions are the inputs of audit --agent claude.
type claudeAuditOptions struct {
	auditOptions
	Version, Before string
	ProjectKey      string
	ClaudeJSON      string
	MCPConfigs      []string
}

// claudeAuditDescription is the --agent claude part of audit --help.
const claudeAuditDescription = `

CLAUDE CODE (--agent claude): reads Claude Code's rule files — managed
(/etc/claude-code/managed-settings.json and managed-settings.d/*.json on Linux, /Library/Application
Support/ClaudeCode on macOS, C:\Program Files\ClaudeCode on Windows), user ($CLAUDE_CONFIG_DIR or
~/.claude: settings.json), project (DIR/.claude/settings.json), local (DIR/.claude/settings.local.json)
and legacy (projects[DIR].allowedTools in ~/.claude.json, where 1.0.0 kept rules) — with the project's
trust (hasTrustDialogAccepted in ~/.claude.json: 2.1.332 ignores the allow rules of an untrusted
project's .claude/settings.json and applies its deny and ask rules and the local file's allows).
The tools are found where the Claude Code repair finds raw identities: the MCP server keys of
~/.claude.json (mcpServers, top-level and per project), of each project's .mcp.json and of every
--mcp-config FILE (repeatable), the raw tools the project's sessions spell under those keys (names
of releases that kept tools raw) and their attributionMcpServer/attributionMcpTool pairs; with
--discover the configured servers are started and list their tools; --inventory FILE wins for the
servers it lists. A server known by its key only, and stored names no listed tool has, are
reported as INCOMPLETE (note, JSON incomplete_servers and unknown_session_names): their tools are
not audited. Every rule is paired with every tool under two releases: now (--claude-version,
default the newest known) and before (--before, default the oldest "version" in the project's
sessions). Each release names the tools in its own spelling and matches rules its own way: whole
names only in its spelling; mcp__<normalized server> from 1.0.51 (the raw key never);
mcp__<server>__* from 2.1.90; partial globs (mcp__lit__get_*) from 2.1.332; mcp__* never in allow,
every MCP tool in deny and ask from 2.1.332; ask rules not before 2.0.14 (1.0.51 has none). Pairs: match, no, or ignored (the rule names the
tool but the release does not apply it); change same, gained, lost. Tools: decision (deny, ask,
allow, default) and outcome (ran, ask, block; "not offered" where a deny removes the tool, from
2.1.90), now and before, and the tools a release gives the same name. A LOST RESTRICTION (a deny or
ask rule that matched before and no longer does) is printed first and listed first.
--format sarif: one result per lost pair (error), gained pair and pair whose rule now is ignored
(sessionfix/audit/refused; warning), at the rule file and line, with the Qwen audit's rule ids and
fingerprints; --baseline FILE (a previous --agent claude json or sarif output) exits 5 only for
findings not in it, and marks SARIF results new, unchanged or absent; --fail-on refused counts
the ignored pairs.
PATH (repeatable) names copies: a ~/.claude directory (settings.json, projects/; a claude.json or
.claude.json beside it is read as ~/.claude.json), a project directory (.claude/ inside), or a
project's .claude directory; then only the PATHs are read (no managed files), and --project-key
says which project of ~/.claude.json they are. --settings SCOPE=FILE (managed, user, project, local)
adds or replaces files. Columns (CSV): settings_file,scope,key,index,rule,kind,server,tool,
name_now,name_before,now,before,change; --tools-out: server,tool,name_now,name_before,decision_now,
rule_now,outcome_now,decision_before,rule_before,outcome_before,shared_now.
   sessionfix audit --agent claude --inventory tools.json --project ~/src/app --fail-on lost
   sessionfix audit --agent claude --mcp-config ~/src/app/mcp.json --discover --format sarif --out audit.sarif
   sessionfix audit --agent claude --inventory tools.json --before 1.0.51 --project-key /home/demo/src/lab \
       copy/dot-claude copy/lab/.claude --format html --out audit.html`

// claudeAuditRun carries the loaded inputs.
type claudeAuditRun struct {
	audit.ClaudeLoaded
	env     *Env
	known   *reports.SARIFBaseline // --baseline, nil without
	partial bool
}

func (r *claudeAuditRun) problem(err error) {
	r.partial = true
	r.Problems = append(r.Problems, err.Error())
	fmt.Fprintf(r.env.Err, "sessionfix: %s\n", reports.Printable(err.Error()))
}

func (r *claudeAuditRun) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	r.Notes = append(r.Notes, s)
	fmt.Fprintf(r.env.Err, "audit: note: %s\n", reports.Printable(s))
}

// claudePaths are what the PATH arguments of a Claude audit give.
type claudePaths struct {
	ConfigDir  string // a copied ~/.claude
	ClaudeJSON string // claude.json / .claude.json beside it
	ProjectDot string // a project's .claude directory
}

// classifyClaudePath says what a PATH is: a ~/.claude copy (projects/ or todos/ inside, or a
// claude.json/.claude.json beside it), a project (a .claude directory inside), or a project's
// .claude directory (settings.json or settings.local.json, nothing of the above).
func classifyClaudePath(p string, into *claudePaths) error {
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("audit: %s: %w", p, err)
	}
	if !fi.IsDir() {
		return usageErrorf("audit --agent claude: %s is not a directory (give rule files with --settings SCOPE=FILE)", p)
	}
	isDir := func(rel string) bool { st, err := os.Stat(filepath.Join(p, rel)); return err == nil && st.IsDir() }
	isFile := func(path string) bool { st, err := os.Stat(path); return err == nil && st.Mode().IsRegular() }
	beside := ""
	for _, n := range []string{"claude.json", ".claude.json"} {
		if c := filepath.Join(filepath.Dir(filepath.Clean(p)), n); isFile(c) {
			beside = c
			break
		}
	}
	if isFile(filepath.Join(p, ".claude.json")) {
		beside = filepath.Join(p, ".claude.json") // $CLAUDE_CONFIG_DIR keeps it inside
	}
	switch {
	case isDir("projects") || isDir("todos") || (beside != "" && !isFile(filepath.Join(p, "settings.local.json"))):
		into.ConfigDir, into.ClaudeJSON = p, beside
	case isDir(".claude"):
		into.ProjectDot = filepath.Join(p, ".claude")
	case isFile(filepath.Join(p, "settings.json")) || isFile(filepath.Join(p, "settings.local.json")):
		into.ProjectDot = p
	default:
		return usageErrorf("audit --agent claude: %s holds no Claude Code files (no projects/, settings.json, settings.local.json or .claude/)", p)
	}
	return nil
}

func newClaudeAuditOptions(c *cli.Context, base auditOptions) (claudeAuditOptions, error) {
	o := claudeAuditOptions{auditOptions: base, Version: c.String("claude-version"), Before: c.String("before"),
		ProjectKey: c.String("project-key"), ClaudeJSON: c.String("claude-json"), MCPConfigs: repeated(c, "mcp-config")}
	for _, f := range []string{"agents", "history", "subagent"} {
		if c.IsSet(f) {
			return o, usageErrorf("--%s is a Qwen Code audit flag; --agent claude does not take it", f)
		}
	}
	if c.IsSet("mode") && c.String("mode") != string(permission.ModeDefault) {
		return o, usageErrorf("--mode: the Claude Code audit computes outcomes in Claude Code's default permission mode only")
	}
	return o, nil
}

func runClaudeAudit(ctx context.Context, env *Env, o claudeAuditOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	now := permission.ClaudeNewest()
	if o.Version != "" {
		v, err := permission.ParseClaudeRelease(o.Version)
		if err != nil {
			return usageErrorf("--claude-version: %v", err)
		}
		now = v
	}
	var before permission.ClaudeRelease
	if o.Before != "" {
		v, err := permission.ParseClaudeRelease(o.Before)
		if err != nil {
			return usageErrorf("--before: %v", err)
		}
		before = v
	}
	r := &claudeAuditRun{env: env}
	if o.Baseline != "" {
		known, err := loadAuditBaseline(o.Baseline)
		if err != nil {
			return err
		}
		r.known = known
	}

	srcs, configDir, err := r.resolve(claudeInputFlags{Paths: o.Paths, Project: o.Project, Cwd: o.Cwd, ProjectKey: o.ProjectKey,
		ClaudeJSON: o.ClaudeJSON, Settings: o.Settings}, "audit")
	if err != nil {
		return err
	}
	tools, err := r.claudeTools(ctx, o, now, configDir, srcs)
	if err != nil {
		return err
	}
	var rules []audit.ClaudeRuleEntry
	for _, s := range srcs {
		f, err := claude.LoadRuleFile(s.path, s.scope)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !s.explicit:
			continue
		case err != nil:
			r.problem(fmt.Errorf("%s settings: %w", s.scope, err))
			continue
		}
		for _, w := range f.Warnings {
			fmt.Fprintf(env.Err, "sessionfix: warning: %s\n", reports.Printable(w))
		}
		r.Files = append(r.Files, f)
		for _, ru := range f.Rules {
			rules = append(rules, audit.ClaudeRuleEntry{ClaudeRule: ru.ClaudeRule, File: ru.File, Key: ru.Key, Index: ru.Index, Line: ru.Line, Column: ru.Column})
		}
	}
	trusted := false
	if r.Global != nil && r.Project != "" {
		trusted, r.Found = r.Global.Trusted(r.Project)
		if pc, ok := r.Global.Projects[r.Project]; ok {
			for _, ru := range pc.AllowedTools {
				rules = append(rules, audit.ClaudeRuleEntry{ClaudeRule: ru.ClaudeRule, File: ru.File, Key: ru.Key, Index: ru.Index, Line: ru.Line, Column: ru.Column})
			}
		}
		if !r.Found {
			r.note("%s has no entry for %s: the project counts as not trusted", r.Global.Path, r.Project)
		}
	}

	// Before: the oldest version in the project's sessions.
	if before.IsZero() {
		before = r.oldestSessionVersion(configDir)
		if before.IsZero() {
			before = now
			r.note("no session with a version found; --before defaults to the current release %s (nothing can change): give --before VERSION", now)
		}
	}

	if before == now {
		r.note("before and now are the same release (%s): no pair can change; give --before VERSION to compare", now)
	}

	rep := audit.RunClaude(audit.ClaudeInput{Rules: rules, Trusted: trusted, Tools: tools, Now: now, Before: before})
	// The lost restrictions come first, on stderr too.
	for _, p := range rep.LostRestrictions() {
		ru, t := rep.Rules[p.Rule], rep.Tools[p.Tool]
		fmt.Fprintf(env.Err, "audit: LOST RESTRICTION: %s rule %q (%s:%d:%d, %s) matched %s/%s as %s under %s and matches nothing of it under %s (now %s: %s)\n",
			ru.Kind, reports.Printable(ru.Text), reports.Printable(ru.File), ru.Line, ru.Column, ru.Key,
			reports.Printable(t.Server), reports.Printable(t.Tool), reports.Printable(t.Before.Name), before, now,
			reports.Printable(t.Now.Name), t.Now.Outcome)
	}
	if err := writeClaudeAuditOutputs(ctx, env, o, r, rep); err != nil {
		return err
	}
	c := rep.Counts
	fmt.Fprintf(env.Err, "audit: Claude Code %s (before: %s), project %s (%s): %s, %s (inventory: %s), %s listed: %d lost (%s), %d gained; %s with another outcome\n",
		now, before, reports.Printable(audit.OrNone(r.Project)), audit.TrustWord(trusted), plural(c.Rules, "rule"), plural(c.Tools, "tool"),
		reports.Printable(r.InventoryFrom), plural(len(rep.VisiblePairs(o.AllPairs)), "pair"), c.Lost, plural(c.LostRestrictions, "restriction"), c.Gained, plural(c.Changed, "tool"))
	hit := false
	results := rep.SARIF()
	if r.known != nil {
		hit = newSinceBaseline(env, r.known, o.Baseline, results, o.FailOn)
	}
	refused := 0
	for _, x := range results {
		if x.RuleID == "sessionfix/audit/refused" {
			refused++
		}
	}
	for _, f := range o.FailOn {
		if r.known != nil {
			break // with a baseline, --fail-on only chooses the classes counted above
		}
		n := map[string]int{"lost": c.Lost, "gained": c.Gained, "refused": refused}[f]
		if n > 0 {
			fmt.Fprintf(env.Err, "audit: --fail-on %s: %s %s\n", f, plural(n, "pair"), f)
			hit = true
		}
	}
	switch {
	case r.partial:
		return withCode(exitPartial)
	case hit:
		return withCode(exitFinding)
	}
	return nil
}

// claudeInputFlags are the flags that say where Claude Code's rule files are.
type claudeInputFlags struct {
	Paths        []string
	Project, Cwd string
	ProjectKey   string
	ClaudeJSON   string
	Settings     []string
}

// claudeSource is one rule file to read.
type claudeSource struct {
	path     string
	scope    permission.ClaudeScope
	explicit bool
}

// resolve finds the rule files (managed, user, project, local), reads ~/.claude.json into
// r.Global and sets r.Project (the project key): from PATH copies, else the scopes Claude Code
// reads. configDir is the ~/.claude whose projects/ hold the sessions ("" when none).
func (r *claudeAuditRun) resolve(in claudeInputFlags, command string) (srcs []claudeSource, configDir string, err error) {
	var cp claudePaths
	for _, p := range in.Paths {
		if err := classifyClaudePath(p, &cp); err != nil {
			return nil, "", err
		}
	}
	configDir, claudeJSON, projectDot := cp.ConfigDir, cp.ClaudeJSON, cp.ProjectDot
	var managed []string
	if len(in.Paths) == 0 {
		configDir = r.env.Getenv("CLAUDE_CONFIG_DIR")
		claudeJSON = filepath.Join(r.env.Home, ".claude.json")
		if configDir != "" {
			claudeJSON = filepath.Join(configDir, ".claude.json")
		} else {
			configDir = filepath.Join(r.env.Home, ".claude")
		}
		dir := in.Project
		if dir == "" {
			dir = in.Cwd
		}
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		projectDot = filepath.Join(dir, ".claude")
		if in.ProjectKey == "" {
			in.ProjectKey = dir
		}
		managed = claude.ManagedFiles()
	}
	if in.ClaudeJSON != "" {
		claudeJSON = in.ClaudeJSON
	}

	// ~/.claude.json: trust and legacy rules.
	if claudeJSON != "" {
		g, err := claude.LoadGlobalConfig(claudeJSON)
		switch {
		case errors.Is(err, fs.ErrNotExist) && in.ClaudeJSON == "":
			r.note("no %s: the project counts as not trusted", claudeJSON)
		case err != nil:
			r.problem(fmt.Errorf("~/.claude.json %w", err))
		default:
			r.Global = g
			for _, w := range g.Warnings {
				fmt.Fprintf(r.env.Err, "sessionfix: warning: %s\n", reports.Printable(w))
			}
		}
	}
	if in.ProjectKey == "" && r.Global != nil {
		var keys []string
		for k := range r.Global.Projects {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if len(keys) == 1 {
			in.ProjectKey = keys[0]
		} else if projectDot != "" {
			return nil, "", usageErrorf("%s --agent claude: which project of %s do the rule files belong to? give --project-key (one of %s)",
				command, r.Global.Path, strings.Join(keys, ", "))
		}
	}
	r.Project = in.ProjectKey

	// Rule files, managed first (listing order only: deny, ask, allow across all scopes).
	for _, m := range managed {
		srcs = append(srcs, claudeSource{m, permission.ClaudeScopeManaged, false})
	}
	if configDir != "" {
		srcs = append(srcs, claudeSource{filepath.Join(configDir, "settings.json"), permission.ClaudeScopeUser, false})
	}
	if projectDot != "" {
		srcs = append(srcs, claudeSource{filepath.Join(projectDot, "settings.json"), permission.ClaudeScopeProject, false},
			claudeSource{filepath.Join(projectDot, "settings.local.json"), permission.ClaudeScopeLocal, false})
	}
	for _, a := range in.Settings {
		k, v, ok := strings.Cut(a, "=")
		scope := permission.ClaudeScope(k)
		if !ok || !slices.Contains([]permission.ClaudeScope{permission.ClaudeScopeManaged, permission.ClaudeScopeUser,
			permission.ClaudeScopeProject, permission.ClaudeScopeLocal}, scope) || v == "" {
			return nil, "", usageErrorf("--settings %q: with --agent claude write SCOPE=FILE, SCOPE one of managed, user, project, local", a)
		}
		// A file given for a scope replaces the discovered file of that scope (managed adds).
		if scope != permission.ClaudeScopeManaged {
			srcs = slices.DeleteFunc(srcs, func(s claudeSource) bool { return s.scope == scope && !s.explicit })
		}
		srcs = append(srcs, claudeSource{v, scope, true})
	}
	return srcs, configDir, nil
}

// oldestSessionVersion returns the oldest "version" in the sessions of the project
// (<configDir>/projects/<sanitized key>/, subagent files included), or of every project when
// that folder does not exist; zero when none.
func (r *claudeAuditRun) oldestSessionVersion(configDir string) permission.ClaudeRelease {
	if configDir == "" {
		return permission.ClaudeRelease{}
	}
	root := filepath.Join(configDir, "projects")
	if r.Project != "" {
		if d := claude.ProjectDir(root, r.Project); d != "" {
			root = d
		}
	}
	vs, errs := claude.SessionVersions(root)
	for _, e := range errs {
		r.problem(e)
	}
	r.Versions = vs
	var oldest permission.ClaudeRelease
	for _, v := range vs {
		rel, err := permission.ParseClaudeRelease(v)
		if err != nil {
			continue
		}
		if oldest.IsZero() || rel.Compare(oldest) < 0 {
			oldest = rel
		}
	}
	return oldest
}

func writeClaudeAuditOutputs(ctx context.Context, env *Env, o claudeAuditOptions, r *claudeAuditRun, rep *audit.ClaudeReport) error {
	pairs := reports.PrintableTable(audit.ClaudePairColumns, rep.PairRows(o.AllPairs))
	tools := reports.PrintableTable(audit.ClaudeToolColumns, rep.ToolRows())
	main, err := audit.Rendering{
		Pairs: pairs,
		Page: func() *reports.HTMLPage {
			return rep.Page(&r.ClaudeLoaded, env.Now(), version, o.AllPairs, pairs, tools)
		},
		Doc:     func() any { return rep.JSON(&r.ClaudeLoaded, env.Now(), o.AllPairs) },
		SARIF:   rep.SARIF,
		Rules:   audit.ClaudeSARIFRules,
		Known:   r.known,
		Version: version,
	}.Render(o.Format)
	if err != nil {
		return err
	}
	return writeReportAndTools(ctx, env, o.Out, main, o.ToolsOut, tools, r.Read(o.Inventory))
}

// claudeTools builds the audit's tool list (raw server key + raw tool) the way the Claude Code
// repair finds raw identities (claudeHomePolicy, claude.ClaudeRawTools): the MCP server keys of
// ~/.claude.json (top-level and per-project mcpServers), of each project's .mcp.json and of the
// audited project's, and of every --mcp-config file; with --discover the tools those servers
// list; the attributionMcpServer/attributionMcpTool pairs of the project's sessions and the raw
// tools their stored names spell under those keys (names written before tools were
// normalized). --inventory wins where given: a server it lists has exactly its tools. Order:
// --inventory, discovered, then from the sessions (the first of two tools sharing a name
// answers). A server known by its key only (no tool from any source) is named in a note: its
// tools are not audited. No tool at all is a usage error.
func (r *claudeAuditRun) claudeTools(ctx context.Context, o claudeAuditOptions, now permission.ClaudeRelease, configDir string, srcs []claudeSource) ([]mcpname.ClaudeTool, error) {
	po := pipeline.Options{MCPConfigs: o.MCPConfigs, Discover: o.Discover, ClaudeVersion: now.String()}
	h := pipeline.ClaudeHome{Dir: configDir, FromEnv: len(o.Paths) == 0}
	if r.Global != nil {
		h.Config = r.Global.Path
	} else {
		h.NoConfig = true
	}
	for _, s := range srcs {
		if s.scope == permission.ClaudeScopeProject && !s.explicit {
			// <project>/.claude/settings.json → <project>/.mcp.json
			h.MCPJSON = append(h.MCPJSON, filepath.Join(filepath.Dir(filepath.Dir(s.path)), ".mcp.json"))
		}
	}
	pol, problems, err := pipeline.ClaudeHomePolicy(ctx, pipelineEnv(r.env), po, now.String(), h)
	if err != nil {
		return nil, err
	}
	for _, p := range problems {
		r.problem(fmt.Errorf("%s: %s", p.Path, p.Reason))
	}

	var file *inventory.Inventory
	if o.Inventory != "" {
		if file, err = inventory.Load(o.Inventory); err != nil {
			return nil, err
		}
	}
	var tools []mcpname.ClaudeTool
	seen := map[mcpname.ClaudeTool]bool{}
	inFile := map[string]bool{}
	counts := map[string]int{}
	add := func(t mcpname.ClaudeTool, from string) {
		if seen[t] || (inFile[t.Server] && from != "inventory") {
			return
		}
		seen[t] = true
		tools = append(tools, t)
		counts[from]++
	}
	if file != nil {
		for _, k := range file.Keys() {
			inFile[k] = true
			for _, t := range file.Servers[k].Tools {
				add(mcpname.ClaudeTool{Server: k, Tool: t.Name}, "inventory")
			}
		}
	}
	for _, t := range pol.Tools { // --discover
		add(t, "discover")
	}
	// The project's sessions (every project's when its folder is not there).
	if configDir != "" {
		root := filepath.Join(configDir, "projects")
		if r.Project != "" {
			if d := claude.ProjectDir(root, r.Project); d != "" {
				root = d
			}
		}
		var files []string
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && d.Type().IsRegular() {
				files = append(files, p)
			}
			return nil
		})
		var snaps []*store.Snapshot
		defer func() { r.unknownNames(snaps, tools) }()
		for _, f := range files {
			snap, err := jsonl.Open(f, claude.Session).Scan(ctx, store.ScanOptions{})
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				r.problem(fmt.Errorf("session %s: %w; its tools are not in the audit", f, err))
				continue
			}
			snaps = append(snaps, snap)
			for _, ft := range claude.ClaudeRawTools(snap, pol) {
				switch {
				case strings.HasPrefix(ft.Source, "attributionMcp"):
					add(ft.ClaudeTool, "attribution")
				case strings.HasPrefix(ft.Source, "server key "):
					add(ft.ClaudeTool, "stored names")
				}
			}
		}
	}
	var parts []string
	if file != nil {
		parts = append(parts, fmt.Sprintf("file %s (%s)", o.Inventory, plural(counts["inventory"], "tool")))
	}
	if o.Discover {
		parts = append(parts, fmt.Sprintf("--discover (%s)", plural(counts["discover"], "tool")))
	}
	if n := counts["attribution"]; n > 0 {
		parts = append(parts, fmt.Sprintf("attributionMcpServer/Tool of the sessions (%s)", plural(n, "tool")))
	}
	if n := counts["stored names"]; n > 0 {
		parts = append(parts, fmt.Sprintf("stored names of the sessions under the configured server keys (%s)", plural(n, "tool")))
	}
	r.InventoryFrom = strings.Join(parts, ", ")
	// Servers known by key only.
	has := map[string]bool{}
	for _, t := range tools {
		has[t.Server] = true
	}
	keySource := map[string]string{}
	var bare []string
	for _, k := range pol.Keys {
		if _, ok := keySource[k.Key]; !ok && !has[k.Key] {
			keySource[k.Key] = k.Source
			bare = append(bare, k.Key)
		}
	}
	for _, k := range bare {
		r.Incomplete = append(r.Incomplete, k)
		r.note("INCOMPLETE: MCP server %q (%s) is known by its key only: no tool of it is in --inventory, --discover or the sessions, so its tools are not audited (pass --inventory or --discover)", k, keySource[k])
	}
	if len(tools) == 0 {
		return nil, usageErrorf("audit --agent claude: no MCP tool known (none in the sessions' names and attributionMcpServer/Tool under the configured server keys): pass --inventory FILE ({\"servers\": {\"<key>\": {\"tools\": [\"<raw tool>\", …]}}}), --mcp-config FILE or --discover")
	}
	return tools, nil
}

// unknownNames notes the MCP names stored in the sessions (sites Claude Code resends, not free
// text) that no tool of the list has in any naming era: tools the sessions used that the audit
// cannot identify (a name whose tool part was normalized cannot be read back without the raw
// tool), so the list is incomplete.
func (r *claudeAuditRun) unknownNames(snaps []*store.Snapshot, tools []mcpname.ClaudeTool) {
	var unknown []string
	seen := map[string]bool{}
	for _, snap := range snaps {
		for _, site := range snap.Sites {
			nm := site.Name
			if site.ReadOnly || site.Kind == claude.ClaudeSiteSelect || !mcpname.HasPrefix(nm) || seen[nm] {
				continue
			}
			seen[nm] = true
			found := false
			for _, e := range mcpname.ClaudeEras {
				if len(mcpname.ClaudeToolsNamed(e, nm, tools)) > 0 {
					found = true
					break
				}
			}
			if !found {
				unknown = append(unknown, nm)
			}
		}
	}
	if len(unknown) == 0 {
		return
	}
	slices.Sort(unknown)
	r.Unknown = unknown
	r.note("INCOMPLETE: %s stored in the sessions name no tool of the list (%s): their raw tools are unknown and not audited (pass --mcp-config FILE, --inventory or --discover)",
		plural(len(unknown), "MCP name"), strings.Join(unknown, ", "))
}
