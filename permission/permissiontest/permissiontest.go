// Package permissiontest loads the reference tables of qwen-reference.md §3 that live in
// permission/testdata/ (scenarios.json = §3.1 real-CLI matrix, unit_cases.json = §3.2 unit
// cases) and turns each row into the values package permission evaluates. Tests of
// permission and of packages built on it (audit) replay the same rows through it.
//
// It is for tests only.
package permissiontest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/sessionfix/sessionfix/permission"
)

// ErrBadTable is returned (wrapped) when a table file does not have the expected shape.
var ErrBadTable = errors.New("bad reference table")

// Server is one configured MCP server of a §3.1 scenario.
type Server struct {
	Key   string   `json:"key"`
	Tools []string `json:"tools"`
	// Trust is mcpServers.<key>.trust; folder trust is disabled in the runs, so it alone
	// makes the default permission allow.
	Trust bool `json:"trust,omitempty"`
	// AgentLocal marks a server declared only in the subagent's own mcpServers frontmatter:
	// its tools exist for the subagent but are not in the session registry
	// (qwen-reference.md §2.6, R26-1).
	AgentLocal bool `json:"agentLocal,omitempty"`
}

// Subagent is present when the scenario's call is made by a subagent.
type Subagent struct {
	DisallowedTools []string `json:"disallowedTools"`
}

// Scenario is one row of qwen-reference.md §3.1.
type Scenario struct {
	ID         string              `json:"id"`
	Servers    []Server            `json:"servers"`
	Mode       permission.Mode     `json:"mode"`
	Allow      []string            `json:"allow,omitempty"`
	Ask        []string            `json:"ask,omitempty"`
	Deny       []string            `json:"deny,omitempty"`
	Subagent   *Subagent           `json:"subagent,omitempty"`
	Target     permission.Identity `json:"target"`
	Registered string              `json:"registered"`
	Expected   permission.Verdict  `json:"expected"`
	Note       string              `json:"note,omitempty"`
}

// Registry returns the session registry of the scenario: every tool of every server that is
// not agent-local, in table order.
func (s Scenario) Registry() []permission.Identity {
	reg := []permission.Identity{}
	for _, srv := range s.Servers {
		if srv.AgentLocal {
			continue
		}
		for _, t := range srv.Tools {
			reg = append(reg, permission.Identity{Server: srv.Key, Tool: t})
		}
	}
	return reg
}

// TargetServer returns the configured server the target belongs to.
func (s Scenario) TargetServer() (Server, error) {
	for _, srv := range s.Servers {
		if srv.Key == s.Target.Server {
			return srv, nil
		}
	}
	return Server{}, fmt.Errorf("scenario %s: target server %q: %w", s.ID, s.Target.Server, ErrBadTable)
}

// Call builds the permission.Call of the scenario's target with a producer context, the
// scenario's rules, mode, trust and subagent blocklist, and the session registry.
func (s Scenario) Call() (permission.Call, error) {
	srv, err := s.TargetServer()
	if err != nil {
		return permission.Call{}, err
	}
	tool := permission.NewTool(s.Target.Server, s.Target.Tool)
	c := permission.Call{
		Context:  tool.Context(permission.ContextProducer),
		Trusted:  srv.Trust,
		Mode:     s.Mode,
		Rules:    permission.NewRules(s.Allow, s.Ask, s.Deny),
		Registry: s.Registry(),
	}
	if s.Subagent != nil {
		c.DisallowedTools = s.Subagent.DisallowedTools
	}
	return c, nil
}

// UnitCase is one row of qwen-reference.md §3.2: PermissionManager.evaluate with one rule.
type UnitCase struct {
	N          int                     `json:"n"`
	Src        string                  `json:"src"`
	Server     string                  `json:"server"`
	Tool       string                  `json:"tool"`
	Registered string                  `json:"registered"`
	Ctx        permission.ContextLevel `json:"ctx"`
	Kind       permission.Behavior     `json:"kind"`
	Rule       string                  `json:"rule"`
	// Registry is the live registry; nil means "no registry" (guard off).
	Registry []permission.Identity `json:"registry,omitempty"`
	Expected permission.Decision   `json:"expected"`
	Note     string                `json:"note,omitempty"`
}

// Name returns a subtest name such as "23_ask_mcp__foo.bar_baz__get_*".
func (u UnitCase) Name() string { return fmt.Sprintf("%d_%s_%s", u.N, u.Kind, u.Rule) }

// Context returns the case's permission context at its ctx level.
func (u UnitCase) Context() permission.Context {
	return permission.NewTool(u.Server, u.Tool).Context(u.Ctx)
}

// Rules returns the single rule in the list its kind names.
func (u UnitCase) Rules() permission.Rules {
	one := []permission.Rule{permission.ParseRule(u.Rule)}
	switch u.Kind {
	case permission.BehaviorAllow:
		return permission.Rules{Allow: one}
	case permission.BehaviorAsk:
		return permission.Rules{Ask: one}
	default:
		return permission.Rules{Deny: one}
	}
}

type table[T any] struct {
	Source string `json:"source"`
	Format string `json:"format"`
	Rows   []T    `json:"rows"`
}

// LoadScenarios reads scenarios.json (qwen-reference.md §3.1) from path.
func LoadScenarios(path string) ([]Scenario, error) {
	rows, err := load[Scenario](path)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.ID == "" || r.Expected == "" || r.Mode == "" {
			return nil, fmt.Errorf("load scenarios %s: row %q incomplete: %w", path, r.ID, ErrBadTable)
		}
	}
	return rows, nil
}

// LoadUnitCases reads unit_cases.json (qwen-reference.md §3.2) from path.
func LoadUnitCases(path string) ([]UnitCase, error) {
	rows, err := load[UnitCase](path)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.N == 0 || r.Expected == "" || r.Ctx == "" || r.Kind == "" {
			return nil, fmt.Errorf("load unit cases %s: row %d incomplete: %w", path, r.N, ErrBadTable)
		}
	}
	return rows, nil
}

func load[T any](path string) ([]T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load reference table: %w", err)
	}
	var t table[T]
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("load reference table %s: %w", path, err)
	}
	if len(t.Rows) == 0 {
		return nil, fmt.Errorf("load reference table %s: no rows: %w", path, ErrBadTable)
	}
	return t.Rows, nil
}
