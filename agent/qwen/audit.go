package qwen

import (
	"cmp"

	"github.com/sessionfix/sessionfix/agent"
)

// Audit is Qwen Code's permission-rule audit as the command line sees it (agent.Audit): it
// reads the settings scopes and subagent files; --agents, --history and --subagent are its
// own flags. The rule semantics (Qwen Code's matching now and before the rename) are this
// room's plug-in: Load, Run, LegacyMatch and the documents (auditdoc.go).
var Audit = &agent.Audit{Reads: "Qwen Code settings", Flags: []string{"agents", "history", "subagent"},
	Run: runAudit, Description: auditDescription, Usage: auditUsage, Homes: auditHomes,
	Home: func(env agent.Env) string { return expandHome(cmp.Or(env.Getenv("QWEN_HOME"), "~/.qwen"), env.Home) }}
