package claude

import (
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/store"
)

// OpenSession opens one Claude Code session file (<config dir>/projects/<project>/<id>.jsonl)
// as a store of the Session profile, for callers above the engines (the audit's tool list).
func OpenSession(path string) store.Store { return jsonl.Open(path, Session) }
