package codex

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/internal/secret"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
)

// FromPath is Info.ConfigFrom for a home found from PATH (HomeOf).
const FromPath = "the Codex home of PATH"

// Info names, in every plan (text and JSON, the report's "codex" member), the Codex config
// and inventory the rollouts of one Codex home were planned with.
type Info struct {
	// Home is the Codex home whose config.toml and thread_history_*.sqlite were read.
	Home string `json:"home,omitempty"`
	// Rollouts counts the rollouts planned with this entry.
	Rollouts int `json:"rollouts"`
	// Config is the config.toml read ("" when there is none).
	Config string `json:"config"`
	// ConfigFrom says why that file: "--codex-config", FromPath, "$CODEX_HOME" or "~/.codex".
	ConfigFrom string `json:"config_from"`
	// Inventory lists the inventory sources (--inventory, --discover); empty when none.
	Inventory []string `json:"inventory"`
	// History lists the thread_history_*.sqlite files whose raw identities were used.
	History []string `json:"history"`
	// HistoryTools counts the distinct raw identities they hold.
	HistoryTools int `json:"history_tools"`
}

// Text is the plan's line about the Codex naming inputs of one home ("Codex naming: config
// PATH (WHY); inventory …; raw identities of N tools from …"); several adds how many rollouts.
func (ci *Info) Text(several bool) string {
	s := fmt.Sprintf("Codex naming: config %s (%s)", ci.Config, ci.ConfigFrom)
	switch {
	case ci.Config == "" && ci.Home != "":
		s = fmt.Sprintf("Codex naming: no %s in %s (%s)", ConfigName, ci.Home, ci.ConfigFrom)
	case ci.Config == "":
		s = "Codex naming: no config"
	}
	if several {
		s += fmt.Sprintf(" for %s", reports.Plural(ci.Rollouts, "rollout"))
	}
	if len(ci.Inventory) > 0 {
		s += "; inventory " + strings.Join(ci.Inventory, " and ")
	} else {
		s += "; no inventory"
	}
	if len(ci.History) > 0 {
		s += fmt.Sprintf("; raw identities of %s from %s", reports.Plural(ci.HistoryTools, "tool"), strings.Join(ci.History, ", "))
	} else {
		s += "; no thread history"
	}
	return s
}

// FromPathOnly reports whether the rollouts were planned with the Codex home of PATH
// (naming.ClassInfo.KeptInHome's condition).
func (ci *Info) FromPathOnly() bool { return ci.ConfigFrom == FromPath }

// PrepareInput is what Prepare reads: the environment, the stores found, the flags that
// shape the Codex policy, and the injected inventory sources (the room does not import the
// MCP client nor the inventory file format).
type PrepareInput struct {
	Getenv func(string) string
	// UserHome is the user's home directory (~).
	UserHome string
	Stores   []store.Store
	// Lexical maps a store path to the path the walk reached it by (scan.Found.Lexical).
	Lexical func(string) string
	SQLite  sqlite.Options
	// ConfigFlag is --codex-config ("" = each home's own config.toml).
	ConfigFlag string
	// InventoryFile is the --inventory path ("" = none) and InventoryTools its raw tools.
	InventoryFile  string
	InventoryTools []agent.Tool
	// Discover, when set (--discover), lists the tools of a config's enabled servers.
	Discover agent.Discover
}

// Prepared is the Codex policy of a run: one per Codex home the rollouts live in.
type Prepared struct {
	// Policy is the policy of a run over one home; ByPath that of each rollout when the run
	// covers several homes.
	Policy   CodexPolicy
	ByPath   map[string]*CodexPolicy
	Problems []agent.Problem
	Info     []*Info
	// Skip lists the rollouts of homes whose own config.toml could not be read (invalid
	// TOML, unreadable): they are left out of the plan, as planning them without the config
	// could pick the wrong names; each home is an error problem (exit 3).
	Skip []string
}

// homeConfigError is a Codex home's own config.toml that exists but could not be read (not
// one named by --codex-config, which stays an error of the whole run).
type homeConfigError struct{ err error }

func (e *homeConfigError) Error() string { return e.err.Error() }
func (e *homeConfigError) Unwrap() error { return e.err }

// homeConfigProblem reports a home whose config.toml could not be read and whose n rollouts
// are therefore left as they are. The reason never quotes the file (ConfigError).
func homeConfigProblem(path string, n int, err error) agent.Problem {
	reason := store.ErrReason(err)
	var ce *ConfigError
	if errors.As(err, &ce) {
		reason = fmt.Sprintf("%v: %v", ErrConfig, ce.Err)
	}
	left := fmt.Sprintf("the %d rollouts of this Codex home are left as they are", n)
	if n == 1 {
		left = "the 1 rollout of this Codex home is left as it is"
	}
	return agent.Problem{Path: path, Severity: store.SevError, Reason: reason + "; " + left + " (fix the file, or pass --codex-config)"}
}

// homeGroup is the rollouts of one Codex home (GroupByHome) and where that home came from
// (Info.ConfigFrom).
type homeGroup struct {
	*HomeStores
	from string
}

// groups sorts the rollouts among in.Stores by the Codex home each lives in (GroupByHome); a
// rollout in no home is planned with the environment's home ($CODEX_HOME, else ~/.codex).
// Groups come sorted by home.
func groups(in PrepareInput) []*homeGroup {
	envFrom := "~/.codex"
	if in.Getenv("CODEX_HOME") != "" {
		envFrom = "$CODEX_HOME"
	}
	var out []*homeGroup
	for _, h := range GroupByHome(in.Stores, in.Lexical, Home(in.Getenv, in.UserHome)) {
		g := &homeGroup{HomeStores: h, from: FromPath}
		if h.FromEnv {
			g.from = envFrom
		}
		out = append(out, g)
	}
	return out
}

// Prepare gathers what the Codex namer needs, once discovery found some Codex rollout, for
// each Codex home the rollouts live in: the config.toml (--codex-config, else that of the
// home), the raw identities of the home's thread_history_*.sqlite, and the inventory as raw
// (server, tool) pairs: the --inventory tools and, with --discover, the tools listed by the
// config's enabled MCP servers (once per config file). A bad --codex-config, a --discover
// without any config (a usage error) or a --discover where no server could be listed is
// the error of the whole run; a home's own broken config.toml leaves that home out (Skip).
func Prepare(ctx context.Context, in PrepareInput) (Prepared, error) {
	var res Prepared
	gs := groups(in)
	discovered := map[string]discovery{}
	var pp naming.PathPolicy[CodexPolicy]
	for _, g := range gs {
		pol, info, probs, err := homePolicy(ctx, in, g, discovered)
		var hce *homeConfigError
		if errors.As(err, &hce) {
			// One home's broken config.toml: that home is left out, the others go on.
			res.Problems = append(res.Problems, homeConfigProblem(filepath.Join(g.Home, ConfigName), len(g.Rollouts), hce.err))
			res.Skip = append(res.Skip, g.Rollouts...)
			continue
		}
		if err != nil {
			return res, err
		}
		res.Problems = append(res.Problems, probs...)
		res.Info = append(res.Info, info)
		pp.Add(pol, g.Rollouts, len(gs) == 1)
	}
	res.Policy, res.ByPath = pp.Default, pp.ByPath
	return res, nil
}

// discovery is what --discover listed for one config file.
type discovery struct {
	tools []agent.Tool
	errs  []error
}

// homePolicy builds the policy of one Codex home's rollouts (see Prepare); discovered caches
// --discover per config file.
func homePolicy(ctx context.Context, in PrepareInput, g *homeGroup, discovered map[string]discovery) (CodexPolicy, *Info, []agent.Problem, error) {
	var pol CodexPolicy
	var probs []agent.Problem
	info := &Info{Home: g.Home, Rollouts: len(g.Rollouts), ConfigFrom: g.from, Inventory: []string{}, History: []string{}}
	path, explicit := in.ConfigFlag, true
	if path == "" {
		path, explicit = filepath.Join(g.Home, ConfigName), false
	} else {
		info.ConfigFrom = "--codex-config"
	}
	cfg, err := LoadConfig(path)
	switch {
	case err == nil:
		pol.Config = cfg
		info.Config = cfg.Path
	case !explicit && errors.Is(err, fs.ErrNotExist):
		// No config: names are attributed from invocation records, the thread history and the
		// inventory only.
	case !explicit:
		return pol, nil, nil, &homeConfigError{err}
	default:
		return pol, nil, nil, err
	}
	// A thread history that cannot be read is an error problem naming it (the run is
	// partial, exit 3: without its identities a colliding tool may get no suffix); the run
	// goes on without its identities.
	hist, used, herrs := HistoryTools(ctx, HistoryPaths(in.Getenv, g.HomeStores), in.SQLite)
	if err := ctx.Err(); err != nil {
		return pol, nil, nil, err
	}
	for _, e := range herrs {
		probs = append(probs, agent.Problem{Path: e.Path, Severity: store.SevError,
			Reason: "Codex thread history not read, its raw identities are not used for naming: " + e.Err.Error()})
	}
	if len(used) > 0 {
		pol.History, pol.HistorySource = hist, strings.Join(baseNames(used), ", ")
		info.History, info.HistoryTools = used, len(hist)
	}
	var tools []agent.Tool
	var sources []string
	if in.InventoryFile != "" {
		tools = append(tools, in.InventoryTools...)
		sources = append(sources, in.InventoryFile)
	}
	if in.Discover != nil {
		if cfg == nil {
			return pol, nil, nil, usage.Errorf("--discover needs a Codex config.toml (none at %s; pass --codex-config)", path)
		}
		d, ok := discovered[cfg.Path]
		if !ok {
			d.tools, d.errs, err = in.Discover(ctx, Servers(in.Getenv, cfg))
			if err := ctx.Err(); err != nil {
				return pol, nil, nil, err
			}
			if err != nil {
				return pol, nil, nil, err
			}
			discovered[cfg.Path] = d
			// A server that could not be listed makes the run partial (exit 3), as in audit.
			for _, e := range d.errs {
				probs = append(probs, agent.Problem{Path: cfg.Path, Severity: store.SevError,
					Reason: e.Error() + "; its tools are not in the inventory"})
			}
		}
		tools = append(tools, d.tools...)
		sources = append(sources, "the servers of "+cfg.Path)
	}
	if len(sources) > 0 {
		pol.Inventory, pol.InventorySource = rawTools(tools), strings.Join(sources, " and ")
		info.Inventory = sources
	}
	return pol, info, probs, nil
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// rawTools is the distinct raw Codex identities of tools, sorted by server then tool (never
// nil).
func rawTools(tools []agent.Tool) []mcpname.CodexTool {
	out := make([]mcpname.CodexTool, 0, len(tools))
	for _, t := range tools {
		out = append(out, mcpname.CodexTool{Server: t.Server, Tool: t.Tool})
	}
	SortTools(out)
	return slices.Compact(out)
}

// Servers are the enabled MCP servers of a Codex config the way Codex starts them (stdio:
// command, args, cwd, env over the process environment; streamable HTTP: url, http_headers,
// and the bearer token named by bearer_token_env_var, read with getenv), in key order.
// Values from the config are handed over as secrets.
func Servers(getenv func(string) string, cfg *Config) []agent.Server {
	var out []agent.Server
	for _, key := range cfg.ServerKeys() {
		s := cfg.Servers[key]
		if !s.Enabled {
			continue
		}
		as := agent.Server{Key: key, Command: s.Command, Cwd: s.Cwd, URL: s.URL, Origin: cfg.Origin}
		for _, a := range s.Args {
			as.Args = append(as.Args, secret.NewSecret(a))
		}
		as.Env = secrets(s.Env)
		as.Headers = secrets(s.HTTPHeaders)
		if s.BearerTokenEnvVar != "" {
			if tok := getenv(s.BearerTokenEnvVar); tok != "" {
				if as.Headers == nil {
					as.Headers = map[string]secret.Secret{}
				}
				as.Headers["Authorization"] = secret.NewSecret("Bearer " + tok)
			}
		}
		out = append(out, as)
	}
	return out
}

// secrets wraps each value of m (nil when empty) as a secret.Secret.
func secrets(m map[string]string) map[string]secret.Secret {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]secret.Secret, len(m))
	for k, v := range m {
		out[k] = secret.NewSecret(v)
	}
	return out
}

// ConfigOption is --codex-config (PrepareInput.ConfigFlag).
const ConfigOption = "codex-config"

// prepare is the Agent's Prepare hook: Prepare over the neutral input (--codex-config from
// in.Options), its policy put into the run's policy under ID.
func prepare(ctx context.Context, in agent.PrepareInput) (agent.Prepared, error) {
	p, err := Prepare(ctx, PrepareInput{Getenv: in.Env.Getenv, UserHome: in.Env.Home, Stores: in.Stores, Lexical: in.Lexical,
		SQLite: in.SQLite, ConfigFlag: in.Options.String(ConfigOption), InventoryFile: in.InventoryFile,
		InventoryTools: in.InventoryTools, Discover: in.Discover})
	if err != nil {
		return agent.Prepared{}, err
	}
	out := agent.Prepared{Problems: p.Problems, Skip: p.Skip}
	out.SetPolicy = func(pol *naming.Policy) {
		naming.SetAgent(pol, ID, &naming.PathPolicy[CodexPolicy]{Default: p.Policy, ByPath: p.ByPath})
	}
	for _, i := range p.Info {
		out.Info = append(out.Info, i)
	}
	return out, nil
}
