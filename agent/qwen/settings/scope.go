package settings

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// Scope names where a settings file or a rule comes from (qwen-reference.md §4.6).
type Scope string

// The scopes. Settings scopes merge in the order of their Rank; ScopeAgent marks subagent
// front matter, which is never merged into settings.
const (
	// ScopeSystemDefaults: $QWEN_CODE_SYSTEM_DEFAULTS_PATH or <dir of system settings>/
	// system-defaults.json; lowest precedence.
	ScopeSystemDefaults Scope = "system-defaults"
	// ScopeUser: $QWEN_HOME/settings.json, else ~/.qwen/settings.json.
	ScopeUser Scope = "user"
	// ScopeWorkspace: <project>/.qwen/settings.json.
	ScopeWorkspace Scope = "workspace"
	// ScopeExplicit: a file given with --settings and no scope. Merged after the workspace and
	// before the system scope (our choice: Qwen Code has no such scope; system settings are
	// documented as overriding everything).
	ScopeExplicit Scope = "explicit"
	// ScopeSystem: $QWEN_CODE_SYSTEM_SETTINGS_PATH or the platform path; highest precedence.
	ScopeSystem Scope = "system"
	// ScopeAgent: a subagent file (.qwen/agents/*.md).
	ScopeAgent Scope = "agent"
)

// Rank is the merge position of a settings scope: later ranks win for scalars and replace
// whole mcpServers entries (qwen-reference.md §4.6: systemDefaults ← user ← workspace ←
// system). Unknown scopes and ScopeAgent rank with ScopeExplicit.
func (s Scope) Rank() int {
	switch s {
	case ScopeSystemDefaults:
		return 0
	case ScopeUser:
		return 1
	case ScopeWorkspace:
		return 2
	case ScopeSystem:
		return 4
	default:
		return 3
	}
}

// Source is one settings file to load.
type Source struct {
	Scope Scope
	Path  string
	// Optional is true for discovered scope files: a missing file is not an error
	// (LoadSource returns nil, nil). Explicit files are not optional.
	Optional bool
}

// DiscoverOptions carries everything Discover reads from the outside world, so tests are
// hermetic. Nothing is read from the process environment.
type DiscoverOptions struct {
	// Env supplies QWEN_HOME, QWEN_CODE_SYSTEM_SETTINGS_PATH and QWEN_CODE_SYSTEM_DEFAULTS_PATH.
	Env Env
	// Home is the user's home directory (os.UserHomeDir). Empty means "no home directory":
	// Qwen Code then uses <TempDir>/.qwen.
	Home string
	// TempDir is used only when Home is empty.
	TempDir string
	// Cwd resolves a relative QWEN_HOME (Qwen Code resolves it against the process cwd).
	Cwd string
	// GOOS selects the system settings path ("linux", "darwin", "windows", …); empty means
	// runtime.GOOS.
	GOOS string
	// ProjectDir is the project root whose .qwen/settings.json is the workspace scope; empty
	// means no workspace scope.
	ProjectDir string
	// Explicit are --settings files, in command-line order. An empty Scope becomes
	// ScopeExplicit; Optional is forced to false.
	Explicit []Source
}

// GlobalDir returns Qwen Code's global directory (Storage.getGlobalQwenDir): $QWEN_HOME when
// set and non-empty ("~" and "~/x" expanded against Home, a relative path resolved against
// Cwd), else <Home>/.qwen, else <TempDir>/.qwen.
func GlobalDir(opts DiscoverOptions) string {
	if v, ok := nonEmpty(opts.Env, "QWEN_HOME"); ok {
		return resolvePath(v, opts)
	}
	if opts.Home == "" {
		return filepath.Join(opts.TempDir, ".qwen")
	}
	return filepath.Join(opts.Home, ".qwen")
}

func resolvePath(p string, opts DiscoverOptions) string {
	switch {
	case p == "~":
		p = opts.Home
	case strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`):
		p = filepath.Join(opts.Home, p[2:])
	}
	if !filepath.IsAbs(p) && opts.Cwd != "" {
		p = filepath.Join(opts.Cwd, p)
	}
	return filepath.Clean(p)
}

// SystemSettingsPath returns the system scope file (settings.ts getSystemSettingsPath):
// $QWEN_CODE_SYSTEM_SETTINGS_PATH when set and non-empty, else
// "/Library/Application Support/QwenCode/settings.json" (darwin),
// `C:\ProgramData\qwen-code\settings.json` (windows), "/etc/qwen-code/settings.json" (others).
func SystemSettingsPath(opts DiscoverOptions) string {
	if v, ok := nonEmpty(opts.Env, "QWEN_CODE_SYSTEM_SETTINGS_PATH"); ok {
		return v
	}
	switch goos(opts) {
	case "darwin":
		return "/Library/Application Support/QwenCode/settings.json"
	case "windows":
		return `C:\ProgramData\qwen-code\settings.json`
	default:
		return "/etc/qwen-code/settings.json"
	}
}

// SystemDefaultsPath returns the system-defaults file (settings.ts getSystemDefaultsPath):
// $QWEN_CODE_SYSTEM_DEFAULTS_PATH when set and non-empty, else system-defaults.json in the
// directory of SystemSettingsPath.
func SystemDefaultsPath(opts DiscoverOptions) string {
	if v, ok := nonEmpty(opts.Env, "QWEN_CODE_SYSTEM_DEFAULTS_PATH"); ok {
		return v
	}
	sys := SystemSettingsPath(opts)
	if goos(opts) == "windows" {
		if i := strings.LastIndexAny(sys, `\/`); i >= 0 {
			return sys[:i+1] + "system-defaults.json"
		}
		return "system-defaults.json"
	}
	return filepath.Join(filepath.Dir(sys), "system-defaults.json")
}

func goos(opts DiscoverOptions) string {
	if opts.GOOS != "" {
		return opts.GOOS
	}
	return runtime.GOOS
}

// Discover returns the settings files Qwen Code loads, in merge order (Scope.Rank), followed
// by nothing else: system defaults, user, workspace, explicit files, system. Discovered
// files are Optional; Discover does not check that they exist.
//
// The workspace scope is left out when ProjectDir is empty, when ProjectDir resolves (after
// symlinks) to the home directory (settings.ts loadSettings: realWorkspaceDir !==
// realHomeDir), or when its settings file is the same file as the user one.
func Discover(opts DiscoverOptions) []Source {
	user := filepath.Join(GlobalDir(opts), "settings.json")
	out := []Source{
		{Scope: ScopeSystemDefaults, Path: SystemDefaultsPath(opts), Optional: true},
		{Scope: ScopeUser, Path: user, Optional: true},
	}
	if opts.ProjectDir != "" {
		project := resolvePath(opts.ProjectDir, opts)
		ws := filepath.Join(project, ".qwen", "settings.json")
		sameAsHome := opts.Home != "" && realPath(project) == realPath(opts.Home)
		if !sameAsHome && !sameFile(ws, user) {
			out = append(out, Source{Scope: ScopeWorkspace, Path: ws, Optional: true})
		}
	}
	for _, e := range opts.Explicit {
		if e.Scope == "" {
			e.Scope = ScopeExplicit
		}
		e.Optional = false
		out = append(out, e)
	}
	out = append(out, Source{Scope: ScopeSystem, Path: SystemSettingsPath(opts), Optional: true})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Scope.Rank() < out[j].Scope.Rank() })
	return out
}

// realPath resolves symlinks when the path exists, else returns it cleaned.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// sameFile reports whether a and b name the same file: equal after resolving symlinks, or
// the same inode when both exist.
func sameFile(a, b string) bool {
	if realPath(a) == realPath(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// ScopeOf guesses the scope of a settings file given by path: <dir>/.qwen/settings.json
// is the workspace scope of <dir>, unless <dir> is the home directory (then it is the user
// scope, as is $QWEN_HOME/settings.json, globalDir being GlobalDir's); anything else is an
// explicit file.
func ScopeOf(path, home, globalDir string) Scope {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ScopeExplicit
	}
	if globalDir != "" && abs == filepath.Join(globalDir, "settings.json") {
		return ScopeUser
	}
	dir := filepath.Dir(abs)
	if filepath.Base(abs) == "settings.json" && filepath.Base(dir) == ".qwen" {
		if home != "" && filepath.Dir(dir) == filepath.Clean(home) {
			return ScopeUser
		}
		return ScopeWorkspace
	}
	return ScopeExplicit
}
