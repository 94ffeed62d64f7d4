package codex

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

// What the Codex namer's policy (CodexPolicy) is gathered from, per Codex home: the stores of
// the home and its thread histories. Reading config.toml is LoadConfig; the inventory and
// --discover are the caller's (they start MCP servers, which a room never does).

// HomeStores is the rollouts of one Codex home and the thread-history databases discovery
// found in it.
type HomeStores struct {
	// Home is the home's directory; FromEnv marks the environment's home ($CODEX_HOME, else
	// ~/.codex: Home), where $CODEX_SQLITE_HOME applies.
	Home    string
	FromEnv bool
	// Rollouts and DBs are store paths, in the order given.
	Rollouts []string
	DBs      []string
}

// GroupByHome sorts the rollouts among stores by the Codex home each lives in (HomeOf of
// lexical(path), the path as the walk reached it: a copied ~/.codex is planned with its own
// config.toml and thread history, never those of whoever runs sessionfix); a rollout in no
// home, or in the same directory as envHome, goes to envHome (FromEnv). Thread-history
// databases among stores join their home's group (left out when it has no rollouts). Groups
// come sorted by home; none without rollouts. It looks at the file system.
func GroupByHome(stores []store.Store, lexical func(string) string, envHome string) []*HomeStores {
	if a, err := filepath.Abs(envHome); err == nil {
		envHome = a
	}
	byHome := map[string]*HomeStores{}
	homeOfDir := map[string]string{}
	group := func(path string) *HomeStores {
		dir := filepath.Dir(path)
		h, ok := homeOfDir[dir] // one lookup per directory, not per rollout
		if !ok {
			h = HomeOf(lexical(path)) // the home holding the link, not its target
			if h != "" && fileio.SameFile(h, envHome) {
				h = ""
			}
			homeOfDir[dir] = h
		}
		g := byHome[h]
		if g == nil {
			g = &HomeStores{Home: h}
			if h == "" {
				g.Home, g.FromEnv = envHome, true
			}
			byHome[h] = g
		}
		return g
	}
	var dbs []string
	for _, st := range stores {
		path := st.Ref().Path
		switch {
		case IsHistory(st):
			dbs = append(dbs, path)
		case st.Ref().Kind == KindRollout:
			g := group(path)
			g.Rollouts = append(g.Rollouts, path)
		}
	}
	for _, db := range dbs {
		h := HomeOf(lexical(db))
		if h == "" || fileio.SameFile(h, envHome) {
			h = ""
		}
		if g := byHome[h]; g != nil {
			g.DBs = append(g.DBs, db)
		}
	}
	out := make([]*HomeStores, 0, len(byHome))
	for _, g := range byHome {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Home < out[j].Home })
	return out
}

// HistoryPaths lists the thread-history databases of g's home: thread_history_*.sqlite in the
// home (for the environment's home: in $CODEX_SQLITE_HOME when set, StateDBs), then those
// discovery found there (g.DBs). Paths may repeat; HistoryTools reads each once.
func HistoryPaths(getenv func(string) string, g *HomeStores) []string {
	dbs := HistoryDBs(g.Home)
	if g.FromEnv {
		dbs = nil
		for _, p := range StateDBs(getenv, g.Home) {
			if strings.HasPrefix(filepath.Base(p), "thread_history_") {
				dbs = append(dbs, p)
			}
		}
	}
	return append(dbs, g.DBs...)
}

// HistoryError is a thread-history database that could not be read.
type HistoryError struct {
	Path string // absolute
	Err  error
}

// HistoryTools reads the raw MCP identities of thread-history databases (HistoryProfile:
// mcpToolCall items of thread_items), deduplicated and sorted by server then tool; used lists
// the databases read (absolute), in order, each once; a database that cannot be read is in
// errs and its identities are left out.
func HistoryTools(ctx context.Context, paths []string, opt sqlite.Options) (tools []mcpname.CodexTool, used []string, errs []HistoryError) {
	seen := map[mcpname.CodexTool]bool{}
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if slices.Contains(used, p) {
			continue
		}
		snap, err := OpenHistory(p, opt).Scan(ctx, store.ScanOptions{})
		if err != nil {
			errs = append(errs, HistoryError{Path: p, Err: err})
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
	SortTools(tools)
	return tools, used, errs
}

// SortTools sorts raw identities by server, then tool.
func SortTools(tools []mcpname.CodexTool) {
	sort.Slice(tools, func(i, j int) bool {
		if tools[i].Server != tools[j].Server {
			return tools[i].Server < tools[j].Server
		}
		return tools[i].Tool < tools[j].Tool
	})
}
