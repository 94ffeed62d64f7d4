package main

import (
	"github.com/sessionfix/sessionfix/agent/claude"
	"github.com/sessionfix/sessionfix/agent/codex"
)

// scanJSON is scan --format json with the agents' members (report.AgentInfo, written under
// each agent's ID) read back as the rooms' rows.
type scanJSON struct {
	scanReport
	Codex  []*codex.Info  `json:"codex"`
	Claude []*claude.Info `json:"claude"`
}
