package kilo

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpinventory"
	permkilo "github.com/sessionfix/sessionfix/permission/kilo"
	"github.com/sessionfix/sessionfix/permission/rules"
)

// The Kilo rule audit on the shared rule-audit layer: this file finds the config files (the
// global config directory's, a project's .kilo/, --kilo-config) and the tools; permission/kilo
// knows what Kilo does with the "permission" rules; the engine (package audit) reports.

// Audit is audit --agent kilo (agent.Audit on the shared layer: Rules).
var Audit = &agent.Audit{Reads: "Kilo config permission rules",
	Flags: []string{ConfigOption},
	Options: []agent.Option{
		{Name: ConfigOption, Repeatable: true, File: true, Usage: "with --agent kilo: a Kilo config file (kilo.json[c], opencode.json[c]) read after the global and project ones (repeatable)"},
	},
	Rules: auditRules,
	Home:  func(env agent.Env) string { return ConfigDir(env.Getenv, env.Home) },
	Description: `

With --agent kilo, audit reads the "permission" rules of Kilo's config files
(~/.config/kilo and the project's .kilo/: opencode.json[c], kilo.json[c];
--kilo-config) and says per tool what Kilo does: ran, ask, deny or hidden (a deny of
every argument, or another server's tool under the same name). Kilo 7.0.33 and 7.7.7
name and match alike, so nothing is lost between them; a rule reaching tools of
several servers whose keys sanitize alike (broad-rule), a shadowed tool and a name
over 64 are findings. A PATH is a config directory or a project with .kilo/.`,
}

// auditRules reads the configs and tools and binds them to Kilo's semantics.
func auditRules(ctx context.Context, in agent.AuditInput) (*rules.Audit, error) {
	var paths []string
	for _, p := range in.Paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		switch {
		case !fi.IsDir():
			return nil, usage.Errorf("audit --agent kilo: %s is not a directory (give a config file with --%s)", p, ConfigOption)
		case slices.ContainsFunc(configPaths(p), exists):
			paths = append(paths, configPaths(p)...)
		case exists(filepath.Join(p, ".kilo")):
			paths = append(paths, configPaths(filepath.Join(p, ".kilo"))...)
		default:
			return nil, usage.Errorf("audit --agent kilo: %s holds no Kilo config (%s) and no .kilo/", p, ConfigNames[len(ConfigNames)-2])
		}
	}
	if len(in.Paths) == 0 {
		paths = append(configPaths(ConfigDir(in.Engine.Env.Getenv, in.Engine.Env.Home)), configPaths(filepath.Join(cmp.Or(in.Project, in.Cwd), ".kilo"))...)
	}
	given := in.Options.Strings(ConfigOption)
	a := &rules.Audit{ID: string(ID), Name: "Kilo Code CLI", Words: permkilo.Words}
	for _, f := range given {
		if !exists(f) {
			a.Problems = append(a.Problems, f+": no such file")
		}
	}
	cfg, problems := ReadConfigs(append(paths, given...))
	for _, p := range problems {
		a.Problems = append(a.Problems, p.Path+": "+p.Reason)
	}
	a.Read = append(a.Read, cfg.Files...)
	for _, f := range cfg.Files {
		n := 0
		for _, r := range cfg.Rules {
			if cfg.RuleFile[r.Permission] == f {
				n++
			}
		}
		a.Files = append(a.Files, rules.File{Path: f, Scope: scopeOf(f, in), Rules: n})
	}
	var tools []permkilo.Tool
	var servers []agent.Server
	for _, s := range cfg.Servers {
		if s.Enabled {
			servers = append(servers, s.Server)
		}
	}
	inv, err := agent.AuditInventory(ctx, in, a, servers, "enabled Kilo MCP server configured (no \"mcp\" in the configs read)", "")
	if err != nil {
		return nil, err
	}
	if inv != nil {
		tools = orderedTools(inv, cfg.Keys())
	}
	rel := permkilo.Releases
	a.Eval = permkilo.AuditEvaluation(cfg.Rules, tools, rel[len(rel)-1], rel[0])
	data := map[string][]byte{}
	for i := range a.Eval.Rules {
		r := &a.Eval.Rules[i]
		f := cfg.RuleFile[cfg.Rules[i].Permission]
		r.File, r.Scope = f, scopeOf(f, in)
		if data[f] == nil {
			data[f], _, _ = owner.ReadFile(f)
		}
		r.Line, r.Column = keyPos(data[f], cfg.Rules[i].Permission)
	}
	for i := range a.Eval.Tools {
		a.Eval.Tools[i].Source = "file"
		if in.Discover {
			a.Eval.Tools[i].Source = "discovered"
		}
	}
	a.Notes = append(a.Notes, "Kilo "+rel[0]+" and "+rel[len(rel)-1]+" name tools and match rules alike (fixtures/kilo-real): nothing is lost between them")
	return a, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// scopeOf is "global" for a file of the global config directory, "project" for one of a .kilo/,
// "given" for --kilo-config's.
func scopeOf(f string, in agent.AuditInput) string {
	switch {
	case filepath.Dir(f) == ConfigDir(in.Engine.Env.Getenv, in.Engine.Env.Home):
		return "global"
	case filepath.Base(filepath.Dir(f)) == ".kilo":
		return "project"
	case slices.Contains(in.Options.Strings(ConfigOption), f):
		return "given"
	}
	return "global"
}

// keyPos is the 1-based line and byte column of the first JSON string equal to key followed by
// a colon in data (the permission key as written); 0, 0 when not found.
func keyPos(data []byte, key string) (int, int) {
	q := []byte(strconv.Quote(key))
	for off := 0; ; {
		i := bytes.Index(data[off:], q)
		if i < 0 {
			return 0, 0
		}
		at := off + i
		rest := bytes.TrimLeft(data[at+len(q):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			line := bytes.Count(data[:at], []byte("\n")) + 1
			return line, at - bytes.LastIndexByte(data[:at], '\n')
		}
		off = at + 1
	}
}

// orderedTools are inv's tools, the configured servers first in config order (then the others,
// sorted), each server's tools in the inventory's order.
func orderedTools(inv *mcpinventory.Inventory, order []string) []permkilo.Tool {
	var out []permkilo.Tool
	for _, t := range inv.InOrder(order) {
		out = append(out, permkilo.Tool{Server: t.Server, Tool: t.Tool})
	}
	return out
}
