package gemini

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

// The settings files whose mcpServers keys name the raw tools of a home's sessions (0.61.0's
// loadSettings; packages/cli/src/config/settings.ts): the home's settings.json (user scope),
// the .gemini/settings.json of each project the home has sessions of (workspace scope; the
// project roots are read from projects.json, tmp/<slug>/.project_root, and sha256 of those
// roots for hash directories), and, for the environment's home only, the system settings
// ($GEMINI_CLI_SYSTEM_SETTINGS_PATH, else /etc/gemini-cli/settings.json, macOS
// /Library/Application Support/GeminiCli/settings.json) and system-defaults.json beside them
// ($GEMINI_CLI_SYSTEM_DEFAULTS_PATH). A file that cannot be parsed is a warning: its keys are
// not used.

// Environment variables of the system settings files.
const (
	EnvSystemSettings = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"
	EnvSystemDefaults = "GEMINI_CLI_SYSTEM_DEFAULTS_PATH"
)

// SystemSettingsPath is the system settings file of the environment.
func SystemSettingsPath(getenv func(string) string) string {
	if v := getenv(EnvSystemSettings); v != "" {
		return v
	}
	return filepath.Join(systemConfigDir, "settings.json")
}

// SystemDefaultsPath is the system defaults file of the environment.
func SystemDefaultsPath(getenv func(string) string) string {
	if v := getenv(EnvSystemDefaults); v != "" {
		return v
	}
	return filepath.Join(filepath.Dir(SystemSettingsPath(getenv)), "system-defaults.json")
}

// HomeSessions is the sessions of one Gemini CLI home: FromEnv marks the environment's
// ($GEMINI_CLI_HOME/.gemini, else ~/.gemini), whose system settings are read too.
type HomeSessions = agent.HomeSessions

// GroupByHome sorts the Gemini CLI sessions among stores by the home each lies in
// (agent.GroupByHome with HomeOf); a session in no such layout, or in envHome, goes to envHome
// (FromEnv). Groups come sorted by home. It looks at the file system.
func GroupByHome(stores []store.Store, lexical func(string) string, envHome string) []*HomeSessions {
	return agent.GroupByHome(stores, []store.Kind{KindSession, KindSessionJSON}, HomeOf, lexical, envHome)
}

// Info names, in every plan (text and JSON, the report's "gemini" member), what the Gemini CLI
// sessions of one home were planned with.
type Info struct {
	Home     string `json:"home"`
	Sessions int    `json:"sessions"`
	// Version is the release whose names are current.
	Version string `json:"version"`
	// Settings lists the settings files read, with how many server keys each gave.
	Settings []string `json:"settings"`
	// Keys counts the distinct server keys.
	Keys int `json:"keys"`
	// Inventory lists the inventory sources (--inventory, --discover); empty when none.
	Inventory []string `json:"inventory"`
	fromPath  bool
}

// Text is the plan's line about the Gemini CLI naming inputs of one home.
func (gi *Info) Text(bool) string {
	s := fmt.Sprintf("Gemini CLI naming: names of %s for %s", gi.Version, gi.Home)
	if len(gi.Settings) > 0 {
		s += fmt.Sprintf("; %d server keys from %s", gi.Keys, strings.Join(gi.Settings, ", "))
	} else {
		s += "; no settings.json with mcpServers"
	}
	if len(gi.Inventory) > 0 {
		s += "; inventory " + strings.Join(gi.Inventory, " and ")
	}
	return s
}

// FromPathOnly reports whether the home was given as a PATH (its own settings were used).
func (gi *Info) FromPathOnly() bool { return gi.fromPath }

// PrepareInput is what HomePolicy needs besides the home: the same for every home of a run.
type PrepareInput struct {
	Getenv         func(string) string
	Version        string
	InventoryFile  string
	InventoryTools []agent.Tool
	Env            mcpconfig.Env
	Discover       agent.Discover
}

// settingsOf lists the settings files of home h (see the comment at the top of this file).
func settingsOf(in PrepareInput, h *HomeSessions) []string {
	files := []string{filepath.Join(h.Home, "settings.json")}
	for _, root := range ProjectRoots(h.Home, h.Sessions) {
		files = append(files, filepath.Join(root, ".gemini", "settings.json"))
	}
	if h.FromEnv {
		files = append(files, SystemSettingsPath(in.Getenv), SystemDefaultsPath(in.Getenv))
	}
	var out []string
	for _, f := range files {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// ProjectRoots returns the project roots of sessions of home, sorted: for each session's
// tmp/<project> directory, the root its .project_root file names, else the root projects.json
// maps to that slug, else the root of projects.json whose sha256 is the directory's name.
// It looks at the file system; unreadable files give no root.
func ProjectRoots(home string, sessions []string) []string {
	slugs := map[string]string{} // slug → root
	if b, _, err := owner.ReadFile(filepath.Join(home, "projects.json")); err == nil {
		var reg struct {
			Projects map[string]string `json:"projects"`
		}
		if json.Unmarshal(b, &reg) == nil {
			for root, slug := range reg.Projects {
				slugs[slug] = root
				sum := sha256.Sum256([]byte(root))
				slugs[hex.EncodeToString(sum[:])] = root
			}
		}
	}
	var out []string
	for _, s := range sessions {
		proj := projectDir(s)
		if proj == "" {
			continue
		}
		root := ""
		if b, _, err := owner.ReadFile(filepath.Join(proj, ".project_root")); err == nil {
			root = strings.TrimSpace(string(b))
		}
		root = cmp.Or(root, slugs[filepath.Base(proj)])
		if root != "" && !slices.Contains(out, root) {
			out = append(out, root)
		}
	}
	slices.Sort(out)
	return out
}

// projectDir is the tmp/<project> directory of a session path, or "".
func projectDir(session string) string {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(session)), "/")
	for i := len(parts) - 2; i >= 1; i-- {
		if parts[i] == "chats" && i >= 2 && parts[i-2] == "tmp" {
			return filepath.FromSlash(strings.Join(parts[:i], "/"))
		}
	}
	return ""
}

// HomePolicy is the Gemini CLI policy of home h: the mcpServers keys of its settings files, the
// inventory's tools and, with in.Discover, the tools those servers list. Problems are files that
// could not be read and servers that could not be listed (the run goes on); the error is a
// usage error (--discover with no server) or in.Discover's.
func HomePolicy(ctx context.Context, in PrepareInput, h *HomeSessions) (Policy, *Info, []agent.Problem, error) {
	pol := Policy{Version: in.Version}
	info := &Info{Home: h.Home, Sessions: len(h.Sessions), Version: in.Version, Settings: []string{}, Inventory: []string{}, fromPath: !h.FromEnv}
	var problems []agent.Problem
	var servers []agent.Server
	seen := map[string]bool{}
	for _, f := range settingsOf(in, h) {
		ss, _, err := mcpconfig.Read(f, mcpconfig.Options{Agent: agentName,
			Expand: func(s string) string { return mcpconfig.Expand(s, in.Env, nil) }})
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			problems = append(problems, agent.Problem{Path: f, Severity: store.SevWarning, Reason: store.ErrReason(err) + "; its server keys are not used"})
			continue
		}
		servers = append(servers, ss...)
		for _, s := range ss {
			pol.Keys = append(pol.Keys, Key{Key: s.Key, Source: f})
			seen[s.Key] = true
		}
		info.Settings = append(info.Settings, fmt.Sprintf("%s (%d)", f, len(ss)))
	}
	info.Keys = len(seen)
	tools, sources, toolProblems, err := agent.PolicyTools(ctx, agent.PolicyToolsInput{InventoryFile: in.InventoryFile, InventoryTools: in.InventoryTools,
		Discover: in.Discover, Servers: servers, Home: h.Home, Agent: agentName, Hint: "no mcpServers in its settings.json"})
	if err != nil {
		return Policy{}, nil, nil, err
	}
	problems = append(problems, toolProblems...)
	if len(sources) > 0 {
		for _, t := range tools {
			gt := mcpname.GeminiTool{Server: t.Server, Tool: t.Tool}
			if !slices.Contains(pol.Tools, gt) {
				pol.Tools = append(pol.Tools, gt)
			}
		}
		pol.ToolsSource = strings.Join(sources, " and ")
		info.Inventory = sources
	}
	return pol, info, problems, nil
}

// VersionOption names the release whose names are current. It has no flag of scan and fix (the
// newest recorded release is current); a caller such as audit may pass one.
const VersionOption = "gemini-version"

// prepare is the Agent's Prepare hook: once discovery found Gemini CLI sessions, HomePolicy of
// each home they lie in (GroupByHome); its policy is put under ID.
func prepare(ctx context.Context, in agent.PrepareInput) (agent.Prepared, error) {
	homes := GroupByHome(in.Stores, in.Lexical, Home(in.Env.Getenv, in.Env.Home))
	if len(homes) == 0 {
		return agent.Prepared{}, nil
	}
	version := cmp.Or(in.Options.String(VersionOption), mcpname.GeminiLatestVersion)
	if era, err := mcpname.GeminiEraOf(version); err != nil {
		return agent.Prepared{}, usage.Errorf("--%s: %v", VersionOption, err)
	} else if era < mcpname.GeminiEraQualified {
		return agent.Prepared{}, usage.Errorf("--%s %s: the repair writes the names of a release from 0.33.0 on (mcp_<server>_<tool>)", VersionOption, version)
	}
	pin := PrepareInput{Getenv: in.Env.Getenv, Version: version, InventoryFile: in.InventoryFile, InventoryTools: in.InventoryTools,
		Env: in.Vars, Discover: in.Discover}
	out, _, err := agent.PrepareHomes(ID, homes, func(h *HomeSessions) (Policy, *Info, []agent.Problem, error) {
		return HomePolicy(ctx, pin, h)
	})
	return out, err
}

// systemConfigDir is Gemini CLI's system configuration directory (Storage.getSystemConfigDir).
var systemConfigDir = func() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/GeminiCli"
	case "windows":
		return `C:\ProgramData\gemini-cli`
	}
	return "/etc/gemini-cli"
}()
