package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/scan"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/all"
	"github.com/sessionfix/sessionfix/store/codex"
	"github.com/sessionfix/sessionfix/store/inventory"
	"github.com/sessionfix/sessionfix/store/settings"
	"github.com/sessionfix/sessionfix/store/sqlite"
)

// checkAgent validates --agent ("" = detect by name and content).
func checkAgent(agent string) error {
	if agent == "" || slices.Contains(all.Agents, agent) {
		return nil
	}
	return usageErrorf("--agent must be one of %s, not %q", strings.Join(all.Agents, ", "), agent)
}

// defaultRoots are the roots walked when no PATH is given: the Codex home's sessions/ and
// archived_sessions/ for --agent codex; otherwise Qwen Code's runtime directory ($QWEN_RUNTIME_DIR,
// else $QWEN_HOME, else ~/.qwen), as the core contract says.
func defaultRoots(env *Env, agent string) []string {
	senv := scan.Env{Getenv: env.Getenv, Home: env.Home}
	qwen := []string{scan.DefaultQwenRoot(senv)}
	codexDirs := scan.DefaultCodexRoots(senv)
	switch agent {
	case all.AgentQwen:
		return qwen
	case all.AgentCodex:
		if found := existing(codexDirs); len(found) > 0 {
			return found
		}
		return codexDirs[:1]
	}
	return qwen
}

func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// codexCache remembers the Codex policy of a command's first pipeline.
type codexCache struct {
	done bool
	res  codexResult
}

// codexResult is the Codex policy, what loading it found worth reporting (servers that could
// not be listed, thread histories that could not be read) and, for the plan, where the
// config and inventory came from.
type codexResult struct {
	pol      rewrite.CodexPolicy
	problems []problemRow
	info     *codexInfo
}

// codexInfo names, in every plan (text and JSON), the Codex config and inventory a run used.
type codexInfo struct {
	// Home is the Codex home whose config.toml and thread_history_*.sqlite were read ("" with
	// --codex-config and no home among the PATHs).
	Home string `json:"home,omitempty"`
	// Config is the config.toml read ("" when there is none).
	Config string `json:"config"`
	// ConfigFrom says why that file: "--codex-config", "the Codex home of PATH",
	// "$CODEX_HOME" or "~/.codex".
	ConfigFrom string `json:"config_from"`
	// Inventory lists the inventory sources (--inventory, --discover); empty when none.
	Inventory []string `json:"inventory"`
	// History lists the thread_history_*.sqlite files whose raw identities were used.
	History []string `json:"history"`
	// HistoryTools counts the distinct raw identities they hold.
	HistoryTools int `json:"history_tools"`
}

// text is the plan's line about the Codex naming inputs.
func (ci *codexInfo) text() string {
	s := fmt.Sprintf("Codex naming: config %s (%s)", ci.Config, ci.ConfigFrom)
	switch {
	case ci.Config == "" && ci.Home != "":
		s = fmt.Sprintf("Codex naming: no %s in %s (%s)", codex.ConfigName, ci.Home, ci.ConfigFrom)
	case ci.Config == "":
		s = "Codex naming: no config"
	}
	if len(ci.Inventory) > 0 {
		s += "; inventory " + strings.Join(ci.Inventory, " and ")
	} else {
		s += "; no inventory"
	}
	if len(ci.History) > 0 {
		s += fmt.Sprintf("; raw identities of %s from %s", plural(ci.HistoryTools, "tool"), strings.Join(ci.History, ", "))
	} else {
		s += "; no thread history"
	}
	return s
}

// codexHomeFor picks the Codex home a run's config.toml and thread history come from: the one
// home the PATHs belong to (codex.HomeOf: a copied ~/.codex is repaired with its own config,
// never the config of whoever runs sessionfix), else $CODEX_HOME, else ~/.codex. PATHs in
// two different homes are a usage error (one run, one Codex configuration), unless
// --codex-config names the config.
func codexHomeFor(env *Env, roots []string, explicitConfig bool) (home, from string, fromEnv bool, err error) {
	var homes []string
	for _, r := range roots {
		if h := codex.HomeOf(r); h != "" && !slices.Contains(homes, h) {
			homes = append(homes, h)
		}
	}
	switch {
	case len(homes) == 1:
		return homes[0], "the Codex home of PATH", false, nil
	case len(homes) > 1 && !explicitConfig:
		return "", "", false, usageErrorf("the PATHs are in %d Codex homes (%s): each home is named with its own config.toml; run once per home, or pass --codex-config",
			len(homes), strings.Join(homes, ", "))
	case len(homes) > 1:
		return "", "", false, nil
	}
	from = "~/.codex"
	if env.Getenv("CODEX_HOME") != "" {
		from = "$CODEX_HOME"
	}
	return codex.Home(env.Getenv, env.Home), from, true, nil
}

// codexPolicy gathers what the Codex namer needs, once discovery found some Codex rollout:
// the config.toml (--codex-config, else that of the Codex home of the PATHs, else
// $CODEX_HOME/config.toml or ~/.codex/config.toml, when it exists), the raw identities of the
// home's thread_history_*.sqlite (and of any such database among the PATHs), and the
// inventory as raw (server, tool) pairs: the --inventory file and, with --discover, the tools
// listed by the config's enabled MCP servers. It is computed once per command (po.codex).
func codexPolicy(ctx context.Context, env *Env, po planOptions, roots []string, found *scan.Found, sopt all.Options) (codexResult, error) {
	if po.codex != nil && po.codex.done {
		return po.codex.res, nil
	}
	var res codexResult
	needed := false
	for _, t := range found.Targets {
		if t.Store.Ref().Kind == store.KindCodexRollout {
			needed = true
			break
		}
	}
	if !needed {
		return res, nil
	}
	home, from, fromEnv, err := codexHomeFor(env, roots, po.CodexConfig != "")
	if err != nil {
		return res, err
	}
	info := &codexInfo{Home: home, ConfigFrom: from, Inventory: []string{}, History: []string{}}
	path, explicit := po.CodexConfig, true
	if path == "" {
		path, explicit = filepath.Join(home, codex.ConfigName), false
	} else {
		info.ConfigFrom = "--codex-config"
	}
	cfg, err := codex.LoadConfig(path)
	switch {
	case err == nil:
		res.pol.Config = cfg
		info.Config = cfg.Path
	case !explicit && errors.Is(err, fs.ErrNotExist):
		// No config: names are attributed from invocation records, the thread history and the
		// inventory only.
	case !explicit:
		return res, fmt.Errorf("%w (pass --codex-config to use another file)", err)
	default:
		return res, err
	}
	var dbs []string
	if home != "" {
		dbs = codex.HistoryDBs(home)
		if fromEnv {
			dbs = nil
			for _, p := range codex.StateDBs(env.Getenv, home) {
				if strings.HasPrefix(filepath.Base(p), "thread_history_") {
					dbs = append(dbs, p)
				}
			}
		}
	}
	for _, t := range found.Targets {
		if st, ok := t.Store.(*sqlite.Store); ok && st.Profile() == sqlite.CodexHistory {
			dbs = append(dbs, t.Store.Ref().Path)
		}
	}
	hist, used, probs := codexHistory(ctx, dbs, sopt)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	res.problems = append(res.problems, probs...)
	if len(used) > 0 {
		res.pol.History, res.pol.HistorySource = hist, strings.Join(baseNames(used), ", ")
		info.History, info.HistoryTools = used, len(hist)
	}
	inv := inventory.New()
	var sources []string
	if po.Inventory != "" {
		file, err := inventory.Load(po.Inventory)
		if err != nil {
			return res, err
		}
		inv.Merge(file)
		sources = append(sources, po.Inventory)
	}
	if po.Discover {
		if cfg == nil {
			return res, usageErrorf("--discover needs a Codex config.toml (none at %s; pass --codex-config)", path)
		}
		found, errs := discoverCodex(ctx, env, cfg)
		if err := ctx.Err(); err != nil {
			return res, err
		}
		inv.Merge(found)
		sources = append(sources, "the servers of "+cfg.Path)
		for _, e := range errs {
			res.problems = append(res.problems, problemRow{Path: cfg.Path, Severity: string(store.SevWarning),
				Reason: e.Error() + "; its tools are not in the inventory"})
		}
	}
	if len(sources) > 0 {
		res.pol.Inventory, res.pol.InventorySource = codexTools(inv), strings.Join(sources, " and ")
		info.Inventory = sources
	}
	res.info = info
	if po.codex != nil {
		po.codex.done, po.codex.res = true, res
	}
	return res, nil
}

// codexHistory reads the raw MCP identities of Codex thread-history databases (the
// CodexHistory profile: mcpToolCall items of thread_items), deduplicated and sorted by server
// then tool; used lists the databases read, in order, each once. A database that cannot be
// read is a warning problem naming it; the run goes on without its identities.
func codexHistory(ctx context.Context, paths []string, sopt all.Options) (tools []mcpname.CodexTool, used []string, probs []problemRow) {
	seen := map[mcpname.CodexTool]bool{}
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if slices.Contains(used, p) {
			continue
		}
		snap, err := sqlite.OpenWith(p, sqlite.CodexHistory, sopt.SQLite).Scan(ctx, store.ScanOptions{})
		if err != nil {
			probs = append(probs, problemRow{Path: p, Severity: string(store.SevWarning),
				Reason: "Codex thread history not read, its raw identities are not used for naming: " + err.Error()})
			continue
		}
		used = append(used, p)
		for _, id := range snap.Identities {
			t := mcpname.CodexTool{Server: id.Server, Tool: id.Tool}
			if t.Server != "" && t.Tool != "" && !seen[t] {
				seen[t] = true
				tools = append(tools, t)
			}
		}
	}
	sortCodexTools(tools)
	return tools, used, probs
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

func sortCodexTools(tools []mcpname.CodexTool) {
	sort.Slice(tools, func(i, j int) bool {
		if tools[i].Server != tools[j].Server {
			return tools[i].Server < tools[j].Server
		}
		return tools[i].Tool < tools[j].Tool
	})
}

// codexTools flattens an inventory into raw Codex identities, sorted by server then tool.
func codexTools(inv *inventory.Inventory) []mcpname.CodexTool {
	tools := []mcpname.CodexTool{}
	for _, key := range inv.Keys() {
		for _, t := range inv.Servers[key].Tools {
			tools = append(tools, mcpname.CodexTool{Server: key, Tool: t.Name})
		}
	}
	sortCodexTools(tools)
	return tools
}

// discoverCodex lists the tools of every enabled server of a Codex config (stdio: command,
// args, cwd, env over this process's environment; streamable HTTP: url, http_headers, and the
// bearer token named by bearer_token_env_var) with store/inventory's MCP client. Servers that
// fail are returned, the others listed. Values from the config are handed over as secrets.
func discoverCodex(ctx context.Context, env *Env, cfg *codex.Config) (*inventory.Inventory, []*inventory.ServerError) {
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
		ms.Env = secrets(s.Env)
		ms.Headers = secrets(s.HTTPHeaders)
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
	return inventory.Discover(ctx, servers, inventory.DiscoverOptions{Env: base, ClientVersion: version})
}

func secrets(m map[string]string) map[string]settings.Secret {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]settings.Secret, len(m))
	for k, v := range m {
		out[k] = settings.NewSecret(v)
	}
	return out
}

// groupedRewrites describes, for each Group of sites rewritten together, the rewrites of its
// other fields (" (namespace mcp__lit)"), so a one-row-per-name report shows the whole new name.
func groupedRewrites(sp *rewrite.StorePlan) map[string]string {
	first := map[string]bool{}
	out := map[string]string{}
	for _, d := range sp.Decisions {
		g := d.Site.Group
		if g == "" || d.Action != rewrite.ActRewrite {
			continue
		}
		if !first[g] {
			first[g] = true
			continue
		}
		out[g] += fmt.Sprintf(" (%s %s)", d.Site.Field, d.New)
	}
	return out
}
