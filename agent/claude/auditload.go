package claude

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/permission"
)

// ClaudeLoaded is what a Claude Code audit (or fix --rules) read, besides the evaluation.
type ClaudeLoaded struct {
	Files  []*RuleFile
	Global *GlobalConfig // ~/.json; nil when absent or unreadable
	// Project is the project key (its entry in ~/.json; "" when unknown); Found says
	// the entry exists.
	Project string
	Found   bool
	// InventoryFrom says where the tools came from (file, --discover, the sessions, with counts).
	InventoryFrom string
	Versions      []string // "version" values found in the project's sessions
	// Incomplete are the server keys known without any tool (not audited).
	Incomplete []string
	// Unknown are MCP names stored in the sessions that no tool of the list has.
	Unknown []string
	// Problems are the inputs that could not be used (an error's text each); Notes what the
	// run said besides (INCOMPLETE, trust defaults).
	Problems []string
	Notes    []string
}

// Read are the paths of every file the audit read (inventory: --inventory, "" without).
func (l *ClaudeLoaded) Read(inventory string) []string {
	read := []string{inventory}
	for _, f := range l.Files {
		read = append(read, f.Path)
	}
	if l.Global != nil {
		read = append(read, l.Global.Path)
	}
	return read
}

// ClaudeInputs say where Claude Code's rule files are (the flags of audit --agent claude and
// fix --rules).
type ClaudeInputs struct {
	// Paths are PATH arguments: copies of a ~/.claude, project directories or a project's
	// .claude directory (ClassifyClaudePath); with them no managed file is read.
	Paths []string
	// Project is --project (default Cwd) when no PATH is given; NoProject ("none"): no project.
	// A project that is the home (the home directory, or one whose .claude is the config
	// directory) is no project: its .claude/settings.json is the user scope.
	Project, Cwd string
	// ProjectKey is --project-key: the project as Claude Code saw it (its key in ~/.claude.json).
	ProjectKey string
	// ClaudeJSON is --claude-json: the ~/.claude.json to read (must exist when given).
	ClaudeJSON string
	// Settings are --settings [SCOPE=]FILE values (managed adds; the others replace their
	// scope); a bare FILE takes the scope its place says (SettingsScopeOf).
	Settings []string
	// Getenv and Home locate $CLAUDE_CONFIG_DIR, ~/.claude and ~/.claude.json.
	Getenv func(string) string
	Home   string
	// Command names the command in usage errors ("audit", "fix --rules").
	Command string
}

// NoProject is --project none: audit no project's rules (only the user, managed and --settings
// files), as when the working directory is the home.
const NoProject = "none"

// sameDir reports whether a and b name the same directory (both exist; symbolic links resolved).
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && fa.IsDir() && os.SameFile(fa, fb)
}

// ClaudeSource is one rule file to read; Explicit: given by --settings (a missing file is a
// problem, not skipped).
type ClaudeSource struct {
	Path     string
	Scope    permission.ClaudeScope
	Explicit bool
}

// ClaudeHooks receive what loading says: Problem an input that could not be used (also in
// ClaudeLoaded.Problems), Note a note (also in ClaudeLoaded.Notes), Warn a parser warning.
type ClaudeHooks struct {
	Problem func(error)
	Note    func(string)
	Warn    func(string)
}

func (l *ClaudeLoaded) problem(h ClaudeHooks, err error) {
	l.Problems = append(l.Problems, err.Error())
	h.Problem(err)
}

func (l *ClaudeLoaded) note(h ClaudeHooks, format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.Notes = append(l.Notes, s)
	h.Note(s)
}

// claudePaths are what the PATH arguments of a Claude audit give.
type claudePaths struct {
	ConfigDir  string // a copied ~/.claude
	ClaudeJSON string // claude.json / .claude.json beside it
	ProjectDot string // a project's .claude directory
}

// classifyClaudePath says what a PATH is: a ~/.claude copy (projects/ or todos/ inside, or a
// claude.json/.claude.json beside it), a project (a .claude directory inside), or a project's
// .claude directory (settings.json or settings.local.json, nothing of the above). A PATH that
// is none of them, or no directory, is a usage error.
func classifyClaudePath(p string, into *claudePaths) error {
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("audit: %s: %w", p, err)
	}
	if !fi.IsDir() {
		return usage.Errorf("audit --agent claude: %s is not a directory (give rule files with --settings [SCOPE=]FILE)", p)
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
	dot := filepath.Join(p, ".claude")
	switch {
	case !isDir("projects") && isDir(".claude") && (isDir(".claude/projects") || isDir(".claude/todos") || isFile(filepath.Join(p, ".claude.json"))):
		// A user's home directory (a copied ~): its .claude is the config directory, the
		// .claude.json beside it ~/.claude.json — never a project (issue 23 items 1 and 3).
		if into.ConfigDir != "" && !sameDir(into.ConfigDir, dot) {
			return usage.Errorf("audit --agent claude: %s and %s are two Claude Code homes: each is audited on its own", into.ConfigDir, dot)
		}
		into.ConfigDir, into.ClaudeJSON = dot, ""
		if c := filepath.Join(p, ".claude.json"); isFile(c) {
			into.ClaudeJSON = c
		} else if c := filepath.Join(dot, ".claude.json"); isFile(c) {
			into.ClaudeJSON = c
		}
	case isDir("projects") || isDir("todos") || (beside != "" && !isFile(filepath.Join(p, "settings.local.json"))):
		if into.ConfigDir != "" && !sameDir(into.ConfigDir, p) {
			return usage.Errorf("audit --agent claude: %s and %s are two Claude Code homes: each is audited on its own", into.ConfigDir, p)
		}
		into.ConfigDir, into.ClaudeJSON = p, beside
	case isDir(".claude"):
		into.ProjectDot = filepath.Join(p, ".claude")
	case isFile(filepath.Join(p, "settings.json")) || isFile(filepath.Join(p, "settings.local.json")):
		into.ProjectDot = p
	default:
		return usage.Errorf("audit --agent claude: %s holds no Claude Code files (no projects/, settings.json, settings.local.json or .claude/)", p)
	}
	return nil
}

// AuditHomes is Audit.Homes: each PATH that is a Claude Code home — a copied ~/.claude, or a
// directory holding one (a user's home directory) — is audited on its own, with every PATH that
// is a project (or a project's .claude); nil when at most one home is given. A PATH that is
// neither is left in every group (Run says why).
func AuditHomes(paths []string) []agent.AuditHome {
	var homes, others []string
	for _, p := range paths {
		var cp claudePaths
		if classifyClaudePath(p, &cp) == nil && cp.ConfigDir != "" {
			homes = append(homes, p)
		} else {
			others = append(others, p)
		}
	}
	if len(homes) < 2 {
		return nil
	}
	out := make([]agent.AuditHome, len(homes))
	for i, h := range homes {
		out[i] = agent.AuditHome{Home: h, Paths: append([]string{h}, others...)}
	}
	return out
}

// Resolve finds the rule files (managed, user, project, local), reads ~/.claude.json into
// l.Global and sets l.Project (the project key): from PATH copies, else the scopes Claude Code
// reads. configDir is the ~/.claude whose projects/ hold the sessions ("" when none). Bad
// PATHs and --settings values, and an unknown project among several, are usage errors.
func (l *ClaudeLoaded) Resolve(in ClaudeInputs, h ClaudeHooks) (srcs []ClaudeSource, configDir string, err error) {
	var cp claudePaths
	for _, p := range in.Paths {
		if err := classifyClaudePath(p, &cp); err != nil {
			return nil, "", err
		}
	}
	configDir, claudeJSON, projectDot := cp.ConfigDir, cp.ClaudeJSON, cp.ProjectDot
	var managed []string
	noProject := false // --project none, or the project would be the home
	if len(in.Paths) == 0 {
		configDir = in.Getenv("CLAUDE_CONFIG_DIR")
		claudeJSON = filepath.Join(in.Home, ".claude.json")
		if configDir != "" {
			claudeJSON = filepath.Join(configDir, ".claude.json")
		} else {
			configDir = filepath.Join(in.Home, ".claude")
		}
		dir := in.Project
		if dir == "" {
			dir = in.Cwd
		}
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		switch {
		case in.Project == NoProject:
			// --project none: no project's rules (user, managed and --settings files only).
			noProject = true
		case sameDir(dir, in.Home) || sameDir(filepath.Join(dir, ".claude"), configDir):
			// The home (a cron job's working directory) is not a project: its .claude is the
			// user's config directory, whose settings.json is the user scope (issue 23 item 3).
			noProject = true
			how := "the working directory"
			if in.Project != "" {
				how = "--project"
			}
			l.note(h, "%s %s is the home, not a project: its .claude/settings.json is read once, as the user scope, and no project's rules are read (give --project DIR to audit a project's, or --project none to say there is none)", how, dir)
		default:
			projectDot = filepath.Join(dir, ".claude")
			if in.ProjectKey == "" {
				in.ProjectKey = dir
			}
		}
		managed = ManagedFiles()
	}
	if in.ClaudeJSON != "" {
		claudeJSON = in.ClaudeJSON
	}

	// ~/.claude.json: trust and legacy rules.
	if claudeJSON != "" {
		g, err := LoadGlobalConfig(claudeJSON)
		switch {
		case errors.Is(err, fs.ErrNotExist) && in.ClaudeJSON == "":
			l.note(h, "no %s: the project counts as not trusted", claudeJSON)
		case err != nil:
			l.problem(h, fmt.Errorf("~/.claude.json %w", err))
		default:
			l.Global = g
			for _, w := range g.Warnings {
				h.Warn(w)
			}
		}
	}
	if in.ProjectKey == "" && l.Global != nil && !noProject {
		var keys []string
		for k := range l.Global.Projects {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if len(keys) == 1 {
			in.ProjectKey = keys[0]
		} else if projectDot != "" {
			return nil, "", usage.Errorf("%s --agent claude: which project of %s do the rule files belong to? give --project-key (one of %s)",
				in.Command, l.Global.Path, strings.Join(keys, ", "))
		}
	}
	l.Project = in.ProjectKey

	// Rule files, managed first (listing order only: deny, ask, allow across all scopes).
	for _, m := range managed {
		srcs = append(srcs, ClaudeSource{m, permission.ClaudeScopeManaged, false})
	}
	if configDir != "" {
		srcs = append(srcs, ClaudeSource{filepath.Join(configDir, "settings.json"), permission.ClaudeScopeUser, false})
	}
	if projectDot != "" {
		srcs = append(srcs, ClaudeSource{filepath.Join(projectDot, "settings.json"), permission.ClaudeScopeProject, false},
			ClaudeSource{filepath.Join(projectDot, "settings.local.json"), permission.ClaudeScopeLocal, false})
	}
	for _, a := range in.Settings {
		k, v, ok := strings.Cut(a, "=")
		scope := permission.ClaudeScope(k)
		switch {
		case ok && slices.Contains(claudeScopes, scope):
			if v == "" {
				return nil, "", usage.Errorf("--settings %q: no file after %s=", a, k)
			}
		default: // a bare FILE (which may hold a "="): its place says its scope
			v = a
			scope = SettingsScopeOf(v, in.Getenv, in.Home)
			if scope == "" {
				return nil, "", usage.Errorf("--settings %q: its place does not say its scope (user: settings.json in $CLAUDE_CONFIG_DIR, "+
					"~/.claude or a copied ~/.claude holding projects/ or todos/; project: DIR/.claude/settings.json; "+
					"local: DIR/.claude/settings.local.json; managed: managed-settings.json, managed-settings.d/*.json): "+
					"write SCOPE=FILE, SCOPE one of managed, user, project, local", a)
			}
			l.note(h, "--settings %s: read as the %s settings (its place says so; SCOPE=FILE gives another scope)", v, scope)
		}
		// A file given for a scope replaces the discovered file of that scope (managed adds).
		if scope != permission.ClaudeScopeManaged {
			srcs = slices.DeleteFunc(srcs, func(s ClaudeSource) bool { return s.Scope == scope && !s.Explicit })
		}
		srcs = append(srcs, ClaudeSource{v, scope, true})
	}
	return srcs, configDir, nil
}

// claudeScopes are the scopes --settings SCOPE=FILE accepts.
var claudeScopes = []permission.ClaudeScope{permission.ClaudeScopeManaged, permission.ClaudeScopeUser,
	permission.ClaudeScopeProject, permission.ClaudeScopeLocal}

// SettingsScopeOf is the scope Claude Code gives the rule file at path by its place, for a bare
// --settings FILE ("" when the place does not say):
//   - managed: a file named managed-settings.json, or a *.json in a managed-settings.d directory
//     (ManagedFilesIn's names, wherever the copy lies);
//   - user: settings.json in the user's configuration directory ($CLAUDE_CONFIG_DIR, else
//     home/.claude; getenv reads the variable), or in a copied ~/.claude (a directory holding
//     projects/ or todos/, as a PATH copy is recognised);
//   - project: DIR/.claude/settings.json of any other DIR;
//   - local: DIR/.claude/settings.local.json (the home's own included: Claude Code run in the
//     home reads it as that directory's local file).
//
// Paths are compared made absolute and with symbolic links resolved where they exist. The
// file need not exist (reading it says so).
func SettingsScopeOf(path string, getenv func(string) string, home string) permission.ClaudeScope {
	abs := canonicalPath(path)
	base, dir := filepath.Base(abs), filepath.Dir(abs)
	switch {
	case base == "managed-settings.json",
		filepath.Base(dir) == "managed-settings.d" && strings.EqualFold(filepath.Ext(base), ".json"):
		return permission.ClaudeScopeManaged
	case base == "settings.local.json" && filepath.Base(dir) == ".claude":
		return permission.ClaudeScopeLocal
	case base != "settings.json":
		return ""
	}
	userDir := ""
	if getenv != nil {
		userDir = getenv("CLAUDE_CONFIG_DIR")
	}
	if userDir == "" && home != "" {
		userDir = filepath.Join(home, ".claude")
	}
	isDir := func(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() }
	switch {
	case userDir != "" && dir == canonicalPath(userDir),
		isDir(filepath.Join(dir, "projects")) || isDir(filepath.Join(dir, "todos")):
		return permission.ClaudeScopeUser
	case filepath.Base(dir) == ".claude":
		return permission.ClaudeScopeProject
	}
	return ""
}

// canonicalPath is p made absolute, with symbolic links resolved when it (or, for a file not
// there, its directory) exists.
func canonicalPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(r, filepath.Base(p))
	}
	return p
}

// LoadRules reads the rule files of srcs (a missing discovered file is skipped, an unreadable
// one a problem; parser warnings go to h.Warn) into l.Files, adds the project's legacy
// allowedTools of ~/.claude.json, and says whether the project is trusted
// (hasTrustDialogAccepted; no entry: not trusted, noted).
func (l *ClaudeLoaded) LoadRules(srcs []ClaudeSource, h ClaudeHooks) (rules []ClaudeRuleEntry, trusted bool) {
	for _, s := range srcs {
		f, err := LoadRuleFile(s.Path, s.Scope)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !s.Explicit:
			continue
		case err != nil:
			l.problem(h, fmt.Errorf("%s settings: %w", s.Scope, err))
			continue
		}
		for _, w := range f.Warnings {
			h.Warn(w)
		}
		l.Files = append(l.Files, f)
		for _, ru := range f.Rules {
			rules = append(rules, ClaudeRuleEntry{ClaudeRule: ru.ClaudeRule, File: ru.File, Key: ru.Key, Index: ru.Index, Line: ru.Line, Column: ru.Column})
		}
	}
	if l.Global != nil && l.Project != "" {
		trusted, l.Found = l.Global.Trusted(l.Project)
		if pc, ok := l.Global.Projects[l.Project]; ok {
			for _, ru := range pc.AllowedTools {
				rules = append(rules, ClaudeRuleEntry{ClaudeRule: ru.ClaudeRule, File: ru.File, Key: ru.Key, Index: ru.Index, Line: ru.Line, Column: ru.Column})
			}
		}
		if !l.Found {
			l.note(h, "%s has no entry for %s: the project counts as not trusted", l.Global.Path, l.Project)
		}
	}
	return rules, trusted
}

// ClaudeReleases parses the two releases compared: now is version (--claude-version; default
// the newest known), then is before (--before; zero when not given: DefaultBefore picks it).
// A bad version is a usage error naming its flag.
func ClaudeReleases(version, before string) (now, then permission.ClaudeRelease, err error) {
	now = permission.ClaudeNewest()
	if version != "" {
		if now, err = permission.ParseClaudeRelease(version); err != nil {
			return now, then, usage.Errorf("--claude-version: %v", err)
		}
	}
	if before != "" {
		if then, err = permission.ParseClaudeRelease(before); err != nil {
			return now, then, usage.Errorf("--before: %v", err)
		}
	}
	return now, then, nil
}

// DefaultBefore is before, or when zero the oldest "version" in the project's sessions
// (OldestSessionVersion), else now (noted: nothing can change). Equal releases are noted.
func (l *ClaudeLoaded) DefaultBefore(before, now permission.ClaudeRelease, configDir string, h ClaudeHooks) permission.ClaudeRelease {
	if before.IsZero() {
		before = l.OldestSessionVersion(configDir, h)
		if before.IsZero() {
			before = now
			l.note(h, "no session with a version found; --before defaults to the current release %s (nothing can change): give --before VERSION", now)
		}
	}
	if before == now {
		l.note(h, "before and now are the same release (%s): no pair can change; give --before VERSION to compare", now)
	}
	return before
}

// OldestSessionVersion returns the oldest "version" in the sessions of the project
// (<configDir>/projects/<sanitized key>/, subagent files included), or of every project when
// that folder does not exist; zero when none. The versions found go to l.Versions.
func (l *ClaudeLoaded) OldestSessionVersion(configDir string, h ClaudeHooks) permission.ClaudeRelease {
	if configDir == "" {
		return permission.ClaudeRelease{}
	}
	root := filepath.Join(configDir, "projects")
	if l.Project != "" {
		if d := ProjectDir(root, l.Project); d != "" {
			root = d
		}
	}
	vs, errs := SessionVersions(root)
	for _, e := range errs {
		l.problem(h, e)
	}
	l.Versions = vs
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
