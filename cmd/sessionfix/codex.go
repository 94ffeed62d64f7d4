package main

import (
	"encoding/json"
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
)

// checkAgent validates --agent ("" = detect by name and content).
func checkAgent(agent string) error {
	if agent == "" || slices.Contains(all.Agents, agent) {
		return nil
	}
	return usageErrorf("--agent must be one of %s, not %q", strings.Join(all.Agents, ", "), agent)
}

// defaultRoots are the roots walked when no PATH is given: Qwen Code's runtime directory for
// --agent qwen; the Codex home's sessions/ and archived_sessions/ for --agent codex; otherwise
// every one of those that exists (Qwen Code's, so that its absence is reported, when none does).
func defaultRoots(env *Env, agent string) []string {
	senv := scan.Env{Getenv: env.Getenv, Home: env.Home}
	qwen := []string{scan.DefaultQwenRoot(senv)}
	codexDirs := scan.DefaultCodexRoots(senv)
	switch agent {
	case all.AgentQwen:
		return qwen
	case all.AgentCodex:
		if dirs := existingDirs(codexDirs); len(dirs) > 0 {
			return dirs
		}
		return codexDirs[:1]
	}
	if dirs := existingDirs(append(qwen, codexDirs...)); len(dirs) > 0 {
		return dirs
	}
	return qwen
}

func existingDirs(paths []string) []string {
	var out []string
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// codexPolicy gathers what the Codex namer needs, once discovery found some Codex rollout:
// the config.toml (--codex-config, else $CODEX_HOME/config.toml when it exists) and the
// inventory file (--inventory) as raw (server, tool) pairs.
func codexPolicy(env *Env, po planOptions, found *scan.Found) (rewrite.CodexPolicy, error) {
	var pol rewrite.CodexPolicy
	needed := false
	for _, t := range found.Targets {
		if t.Store.Ref().Kind == store.KindCodexRollout {
			needed = true
			break
		}
	}
	if !needed {
		return pol, nil
	}
	path, explicit := po.CodexConfig, true
	if path == "" {
		path, explicit = filepath.Join(codex.Home(env.Getenv, env.Home), codex.ConfigName), false
	}
	cfg, err := codex.LoadConfig(path)
	switch {
	case err == nil:
		pol.Config = cfg
	case !explicit && errors.Is(err, fs.ErrNotExist):
		// No config: names are attributed from invocation records and the inventory only.
	case !explicit:
		return pol, fmt.Errorf("%w (pass --codex-config to use another file)", err)
	default:
		return pol, err
	}
	if po.Inventory != "" {
		tools, err := loadCodexInventory(po.Inventory)
		if err != nil {
			return pol, err
		}
		pol.Inventory, pol.InventorySource = tools, po.Inventory
	}
	return pol, nil
}

// loadCodexInventory reads an inventory file (the same {"servers": {KEY: {"tools": [...]}}}
// format as for Qwen Code) as raw Codex identities, sorted by server then tool. Keys Codex
// would refuse to start are kept here; the namer leaves them out of the tool set.
func loadCodexInventory(path string) ([]mcpname.CodexTool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read inventory: %w", err)
	}
	var inv struct {
		Servers map[string]struct {
			Tools []string `json:"tools"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(b, &inv); err != nil {
		return nil, fmt.Errorf("read inventory %s: %w", path, err)
	}
	tools := []mcpname.CodexTool{}
	for server, s := range inv.Servers {
		for _, t := range s.Tools {
			tools = append(tools, mcpname.CodexTool{Server: server, Tool: t})
		}
	}
	sort.Slice(tools, func(i, j int) bool {
		if tools[i].Server != tools[j].Server {
			return tools[i].Server < tools[j].Server
		}
		return tools[i].Tool < tools[j].Tool
	})
	return tools, nil
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
