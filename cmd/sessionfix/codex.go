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

// codexResult is the Codex policy and what loading it found worth reporting (servers that
// could not be listed).
type codexResult struct {
	pol      rewrite.CodexPolicy
	problems []problemRow
}

// codexPolicy gathers what the Codex namer needs, once discovery found some Codex rollout:
// the config.toml (--codex-config, else $CODEX_HOME/config.toml when it exists), and the
// inventory as raw (server, tool) pairs: the --inventory file and, with --discover, the tools
// listed by the config's enabled MCP servers. It is computed once per command (po.codex).
func codexPolicy(ctx context.Context, env *Env, po planOptions, found *scan.Found) (codexResult, error) {
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
	path, explicit := po.CodexConfig, true
	if path == "" {
		path, explicit = filepath.Join(codex.Home(env.Getenv, env.Home), codex.ConfigName), false
	}
	cfg, err := codex.LoadConfig(path)
	switch {
	case err == nil:
		res.pol.Config = cfg
	case !explicit && errors.Is(err, fs.ErrNotExist):
		// No config: names are attributed from invocation records and the inventory only.
	case !explicit:
		return res, fmt.Errorf("%w (pass --codex-config to use another file)", err)
	default:
		return res, err
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
	}
	if po.codex != nil {
		po.codex.done, po.codex.res = true, res
	}
	return res, nil
}

// codexTools flattens an inventory into raw Codex identities, sorted by server then tool.
func codexTools(inv *inventory.Inventory) []mcpname.CodexTool {
	tools := []mcpname.CodexTool{}
	for _, key := range inv.Keys() {
		for _, t := range inv.Servers[key].Tools {
			tools = append(tools, mcpname.CodexTool{Server: key, Tool: t.Name})
		}
	}
	sort.Slice(tools, func(i, j int) bool {
		if tools[i].Server != tools[j].Server {
			return tools[i].Server < tools[j].Server
		}
		return tools[i].Tool < tools[j].Tool
	})
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
