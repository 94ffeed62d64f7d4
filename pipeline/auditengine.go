package pipeline

import (
	"time"

	"github.com/sessionfix/sessionfix/inventory"
	"github.com/sessionfix/sessionfix/store/agent"
)

// AuditEngine is the engine's part of an agent's audit (agent.AuditEngine), which the command
// hands to the room: env and its $VAR values, --discover's MCP client (Discover as scan's;
// ListTools with discoverTimeout per server), StoredNames and HistoryCheck.
func AuditEngine(env Env, discoverTimeout time.Duration) agent.AuditEngine {
	return agent.AuditEngine{Env: env.agent(), Vars: env.settings(), Discover: discoverer(env),
		ListTools: inventory.Lister(inventory.DiscoverOptions{Env: env.settings(), Timeout: discoverTimeout,
			ClientName: "sessionfix", ClientVersion: env.ClientVersion}),
		StoredNames: StoredNames, History: HistoryCheck(env)}
}
