package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/inventory"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/scan"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/all"
	"github.com/sessionfix/sessionfix/store/codex"
	"github.com/sessionfix/sessionfix/store/qwen/settings"
)

// CodexCache remembers the Codex policy of a command's first pipeline (Options.Codex).
type CodexCache struct {
	done bool
	res  codexResult
}

// codexResult is the Codex policy (one per Codex home the rollouts live in), what loading it
// found worth reporting (servers that could not be listed, thread histories that could not be
// read) and, for the plan, where each home's config and inventory came from.
type codexResult struct {
	pol codex.CodexPolicy
	// byPath holds the policy of each rollout when the run covers several Codex homes.
	byPath   map[string]*codex.CodexPolicy
	problems []ProblemRow
	info     []*CodexInfo
	// skip lists the rollouts of homes whose own config.toml could not be read (invalid
	// TOML, unreadable): they are left out of the plan, as planning them without the config
	// could pick the wrong names; each home is an error problem (exit 3).
	skip []string
}

// homeConfigError is a Codex home's own config.toml that exists but could not be read (not
// one named by --codex-config, which stays an error of the whole run).
type homeConfigError struct{ err error }

func (e *homeConfigError) Error() string { return e.err.Error() }
func (e *homeConfigError) Unwrap() error { return e.err }

// homeConfigProblem reports a home whose config.toml could not be read and whose n rollouts
// are therefore left as they are. The reason never quotes the file (codex.ConfigError).
func homeConfigProblem(path string, n int, err error) ProblemRow {
	reason := ErrReason(err)
	var ce *codex.ConfigError
	if errors.As(err, &ce) {
		reason = fmt.Sprintf("%v: %v", codex.ErrConfig, ce.Err)
	}
	left := fmt.Sprintf("the %d rollouts of this Codex home are left as they are", n)
	if n == 1 {
		left = "the 1 rollout of this Codex home is left as it is"
	}
	return ProblemRow{Path: path, Severity: string(store.SevError), Reason: reason + "; " + left + " (fix the file, or pass --codex-config)"}
}

// codexHomeGroup is the rollouts of one Codex home (codex.GroupByHome) and where that home
// came from (CodexInfo.ConfigFrom).
type codexHomeGroup struct {
	*codex.HomeStores
	from string
}

// codexGroups sorts the discovered rollouts by the Codex home each lives in
// (codex.GroupByHome); a rollout in no home is planned with the environment's home
// ($CODEX_HOME, else ~/.codex). Groups come sorted by home.
func codexGroups(env Env, found *scan.Found) []*codexHomeGroup {
	envFrom := "~/.codex"
	if env.Getenv("CODEX_HOME") != "" {
		envFrom = "$CODEX_HOME"
	}
	stores := make([]store.Store, len(found.Targets))
	for i, t := range found.Targets {
		stores[i] = t.Store
	}
	var out []*codexHomeGroup
	for _, h := range codex.GroupByHome(stores, found.Lexical, codex.Home(env.Getenv, env.Home)) {
		g := &codexHomeGroup{HomeStores: h, from: CodexFromPath}
		if h.FromEnv {
			g.from = envFrom
		}
		out = append(out, g)
	}
	return out
}

// codexPolicy gathers what the Codex namer needs, once discovery found some Codex rollout,
// for each Codex home the rollouts live in (codexGroups): the config.toml (--codex-config, else
// that of the home), the raw identities of the home's thread_history_*.sqlite, and the
// inventory as raw (server, tool) pairs: the --inventory file and, with --discover, the tools
// listed by the config's enabled MCP servers. It is computed once per command (po.Codex).
// file is the --inventory file, read once by New (nil without one).
func codexPolicy(ctx context.Context, env Env, po Options, found *scan.Found, sopt all.Options, file *inventory.Inventory) (codexResult, error) {
	if po.Codex != nil && po.Codex.done {
		return po.Codex.res, nil
	}
	var res codexResult
	groups := codexGroups(env, found)
	if len(groups) == 0 {
		return res, nil
	}
	discovered := map[string]codexDiscovery{}
	for _, g := range groups {
		pol, info, probs, err := codexHomePolicy(ctx, env, po, g, file, discovered, sopt)
		var hce *homeConfigError
		if errors.As(err, &hce) {
			// One home's broken config.toml: that home is left out, the others go on.
			res.problems = append(res.problems, homeConfigProblem(filepath.Join(g.Home, codex.ConfigName), len(g.Rollouts), hce.err))
			res.skip = append(res.skip, g.Rollouts...)
			continue
		}
		if err != nil {
			return res, err
		}
		res.problems = append(res.problems, probs...)
		res.info = append(res.info, info)
		if len(groups) == 1 {
			res.pol = pol
			break
		}
		if res.byPath == nil {
			res.byPath = map[string]*codex.CodexPolicy{}
		}
		for _, r := range g.Rollouts {
			res.byPath[r] = &pol
		}
	}
	if po.Codex != nil {
		po.Codex.done, po.Codex.res = true, res
	}
	return res, nil
}

// codexDiscovery is what --discover listed for one config file.
type codexDiscovery struct {
	inv  *inventory.Inventory
	errs []*inventory.ServerError
}

// codexHomePolicy builds the policy of one Codex home's rollouts (see codexPolicy);
// discovered caches --discover per config file.
func codexHomePolicy(ctx context.Context, env Env, po Options, g *codexHomeGroup, file *inventory.Inventory,
	discovered map[string]codexDiscovery, sopt all.Options) (codex.CodexPolicy, *CodexInfo, []ProblemRow, error) {
	var pol codex.CodexPolicy
	var probs []ProblemRow
	info := &CodexInfo{Home: g.Home, Rollouts: len(g.Rollouts), ConfigFrom: g.from, Inventory: []string{}, History: []string{}}
	path, explicit := po.CodexConfig, true
	if path == "" {
		path, explicit = filepath.Join(g.Home, codex.ConfigName), false
	} else {
		info.ConfigFrom = "--codex-config"
	}
	cfg, err := codex.LoadConfig(path)
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
	hist, used, hprobs := codexHistory(ctx, codex.HistoryPaths(env.Getenv, g.HomeStores), sopt)
	if err := ctx.Err(); err != nil {
		return pol, nil, nil, err
	}
	probs = append(probs, hprobs...)
	if len(used) > 0 {
		pol.History, pol.HistorySource = hist, strings.Join(baseNames(used), ", ")
		info.History, info.HistoryTools = used, len(hist)
	}
	inv := inventory.New()
	var sources []string
	if file != nil {
		inv.Merge(file)
		sources = append(sources, po.Inventory)
	}
	if po.Discover {
		if cfg == nil {
			return pol, nil, nil, usagef("--discover needs a Codex config.toml (none at %s; pass --codex-config)", path)
		}
		d, ok := discovered[cfg.Path]
		if !ok {
			var n int
			d.inv, n, d.errs = discoverCodex(ctx, env, cfg)
			if err := ctx.Err(); err != nil {
				return pol, nil, nil, err
			}
			if err := AllServersFailed(n, d.errs); err != nil {
				return pol, nil, nil, err
			}
			discovered[cfg.Path] = d
			// A server that could not be listed makes the run partial (exit 3), as in audit.
			for _, e := range d.errs {
				probs = append(probs, ProblemRow{Path: cfg.Path, Severity: string(store.SevError),
					Reason: e.Error() + "; its tools are not in the inventory"})
			}
		}
		inv.Merge(d.inv)
		sources = append(sources, "the servers of "+cfg.Path)
	}
	if len(sources) > 0 {
		pol.Inventory, pol.InventorySource = codexTools(inv), strings.Join(sources, " and ")
		info.Inventory = sources
	}
	return pol, info, probs, nil
}

// codexHistory reads the raw MCP identities of Codex thread-history databases
// (codex.HistoryTools); a database that cannot be read is an error problem naming it (the run
// is partial, exit 3: without its identities a colliding tool may get no suffix); the run goes
// on without its identities.
func codexHistory(ctx context.Context, paths []string, sopt all.Options) (tools []mcpname.CodexTool, used []string, probs []ProblemRow) {
	tools, used, errs := codex.HistoryTools(ctx, paths, sopt.SQLite)
	for _, e := range errs {
		probs = append(probs, ProblemRow{Path: e.Path, Severity: string(store.SevError),
			Reason: "Codex thread history not read, its raw identities are not used for naming: " + e.Err.Error()})
	}
	return tools, used, probs
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// codexTools flattens an inventory into raw Codex identities, sorted by server then tool.
func codexTools(inv *inventory.Inventory) []mcpname.CodexTool {
	tools := []mcpname.CodexTool{}
	for _, key := range inv.Keys() {
		for _, t := range inv.Servers[key].Tools {
			tools = append(tools, mcpname.CodexTool{Server: key, Tool: t.Name})
		}
	}
	codex.SortTools(tools)
	return tools
}

// discoverCodex lists the tools of every enabled server of a Codex config (stdio: command,
// args, cwd, env over this process's environment; streamable HTTP: url, http_headers, and the
// bearer token named by bearer_token_env_var) with inventory's MCP client. Servers that
// fail are returned, the others listed; n counts the servers started. Values from the config
// are handed over as secrets.
func discoverCodex(ctx context.Context, env Env, cfg *codex.Config) (inv *inventory.Inventory, n int, errs []*inventory.ServerError) {
	var servers []settings.MCPServer
	for _, key := range cfg.ServerKeys() {
		s := cfg.Servers[key]
		if !s.Enabled {
			continue
		}
		ms := settings.MCPServer{Key: key, Command: s.Command, Cwd: s.Cwd, URL: s.URL}
		switch {
		case s.Command != "":
			ms.Transport = settings.TransportStdio
		case s.URL != "":
			ms.Transport, ms.URLKey = settings.TransportHTTP, "url"
		}
		for _, a := range s.Args {
			ms.Args = append(ms.Args, settings.NewSecret(a))
		}
		ms.Env = Secrets(s.Env)
		ms.Headers = Secrets(s.HTTPHeaders)
		if s.BearerTokenEnvVar != "" {
			if tok := env.Getenv(s.BearerTokenEnvVar); tok != "" {
				if ms.Headers == nil {
					ms.Headers = map[string]settings.Secret{}
				}
				ms.Headers["Authorization"] = settings.NewSecret("Bearer " + tok)
			}
		}
		servers = append(servers, ms)
	}
	var base settings.Env
	if env.Environ != nil {
		base = settings.EnvFromList(env.Environ())
	}
	inv, errs = inventory.Discover(ctx, servers, inventory.DiscoverOptions{Env: base, ClientVersion: env.ClientVersion})
	return inv, len(servers), errs
}

// AllServersFailed is the error of a --discover where not one of n servers (n > 0) could be
// listed: the same in fix and audit (exit 1, nothing planned or reported: an inventory of
// nothing would make every result wrong), with each server's cause.
func AllServersFailed(n int, errs []*inventory.ServerError) error {
	return inventory.AllFailed(n, errs)
}

// Secrets wraps each value of m (nil when empty) as a settings.Secret, so it never reaches any output.
func Secrets(m map[string]string) map[string]settings.Secret {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]settings.Secret, len(m))
	for k, v := range m {
		out[k] = settings.NewSecret(v)
	}
	return out
}
