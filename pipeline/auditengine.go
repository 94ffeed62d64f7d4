package pipeline

import (
	"sync"
	"time"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/inventory"
)

// AuditEngine is the engine's part of an agent's audit (agent.AuditEngine), which the command
// hands to the room: env and its $VAR values, --discover's MCP client (Discover as scan's;
// ListTools with discoverTimeout per server; untrusted: --discover-untrusted, servers of
// configs another user owns or can write are started too), StoredNames and HistoryCheck.
func AuditEngine(env Env, discoverTimeout time.Duration, untrusted bool) agent.AuditEngine {
	return agent.AuditEngine{Env: env.agent(), Vars: env.settings(), Discover: discoverer(env, untrusted),
		ListTools: inventory.Lister(inventory.DiscoverOptions{Env: env.settings(), Timeout: discoverTimeout,
			ClientName: "sessionfix", ClientVersion: env.ClientVersion, AllowUntrusted: untrusted}),
		StoredNames: StoredNames, History: HistoryCheck(env)}
}

// AuditEngineAt is AuditEngine (untrusted: --discover-untrusted) with the fix runs of stateDir (audit --state-dir, "" for the
// default: StateDir) as what the audit reads renames from (RecordedRenames, read once when the
// room first asks).
func AuditEngineAt(env Env, discoverTimeout time.Duration, untrusted bool, stateDir string) agent.AuditEngine {
	e := AuditEngine(env, discoverTimeout, untrusted)
	dir := StateDir(env.Getenv, env.Home, stateDir)
	e.Renames = sync.OnceValues(func() (*agent.Renames, []error) { return RecordedRenames(dir) })
	return e
}
