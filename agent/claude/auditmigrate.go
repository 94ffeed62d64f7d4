package claude

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
)

// Claude Code rule migration (issue 11 item 5, fix --rules): a rule written in a legacy
// spelling names a raw tool (or server) that the current release spells differently, so it
// matches nothing now ("a legacy deny stops denying"). PlanClaudeRules finds such rules and
// the spelling that names the same raw identity under the current release. Pure: no I/O.

// ClassClaudeLegacyRule is the class of a legacy-spelled Claude Code rule in a fix plan.
const ClassClaudeLegacyRule mcpname.Class = "claude-legacy-rule"

// MigrationAction is what fix --rules does with one rule.
type MigrationAction string

// Migration actions.
const (
	MigrateRewrite MigrationAction = "rewrite"
	// MigrateKeep: a legacy spelling that is not rewritten (Note says why: it would grant a
	// tool the old rule did not, it names tools that now have different names, no spelling
	// matches under the current release).
	MigrateKeep MigrationAction = "keep"
)

// ClaudeMigration is the plan for one legacy-spelled rule.
type ClaudeMigration struct {
	// Rule is the index of the rule in PlanClaudeRules' rules.
	Rule int
	Old  string
	// New is the rule in the current spelling ("" when kept without one).
	New    string
	Action MigrationAction
	// WrittenFor says which spelling the old rule is in: a naming era ("raw",
	// "server-normalized", "normalized"), or "raw server key".
	WrittenFor string
	// Before are the tools the old rule named in its spelling; After the tools New matches
	// under the current release.
	Before, After []mcpname.ClaudeTool
	// Extra are the tools After has and Before has not: a shared name (two raw tools the
	// current release spells alike, or two server keys that normalize alike). For an allow
	// rule that is a grant the old rule did not make.
	Extra []mcpname.ClaudeTool
	Note  string
}

// Grants reports whether the rewrite would let a tool run (or stop asking) that the old rule
// did not cover: an allow rule with Extra tools.
func (m ClaudeMigration) Grants(kind permission.ClaudeKind) bool {
	return kind == permission.ClaudeAllow && len(m.Extra) > 0
}

// legacyEras are the naming eras a rule may have been written for, oldest first (the dedup
// era names as the normalized one).
var legacyEras = []mcpname.ClaudeEra{mcpname.ClaudeEraRaw, mcpname.ClaudeEraServerNormalized, mcpname.ClaudeEraNormalized}

// PlanClaudeRules returns a migration for every rule that matches no tool under release now
// but names tools of the inventory in another era's spelling:
//
//   - a whole name equal to the name some tool had in an older era ("mcp__foo.bar__deploy.prod"
//     in 1.0.0's raw era, "mcp__foo_bar__deploy.prod" in 1.0.51's): New is now's name of those
//     tools; when they now have different names the rule is kept (it cannot be one string);
//   - a server-level or wildcard rule whose server part is a raw server key that normalizes to
//     something else ("mcp__com.example.enterprise-search-platform", "mcp__foo.bar__*"): New
//     has the normalized key.
//
// Rules with content ("Tool(…)"), rules that are not MCP names and rules that already match a
// tool under now are left out. A rewrite whose New also matches tools the old rule did not name
// (Extra: a shared name) is flagged; for an allow rule it is kept unless allowShared (it would
// grant them), for deny and ask it is made (it restricts more, never less) with a note.
func PlanClaudeRules(rules []permission.ClaudeRule, tools []mcpname.ClaudeTool, now permission.ClaudeRelease, allowShared bool) []ClaudeMigration {
	f := permission.ClaudeFeaturesOf(now)
	matchesNow := func(kind permission.ClaudeKind, rule string) []mcpname.ClaudeTool {
		var out []mcpname.ClaudeTool
		for _, t := range tools {
			if permission.ClaudeKindMatches(f, kind, rule, now.Name(t.Server, t.Tool)) {
				out = append(out, t)
			}
		}
		return out
	}
	var out []ClaudeMigration
	for i, r := range rules {
		text := r.Text
		parsed, ok := permission.ParseClaudeMCPName(text)
		if !ok || strings.Contains(text, "(") || len(matchesNow(r.Kind, text)) > 0 {
			continue
		}
		m := ClaudeMigration{Rule: i, Old: text}
		// A whole name of an older era.
		for _, e := range legacyEras {
			if e >= now.Era() {
				continue
			}
			for _, t := range tools {
				if mcpname.ClaudeNameIn(e, t.Server, t.Tool) == text {
					m.WrittenFor = e.String() // the newest era that spells it so
					if !slices.Contains(m.Before, t) {
						m.Before = append(m.Before, t)
					}
				}
			}
		}
		if len(m.Before) > 0 {
			var names []string
			for _, t := range m.Before {
				if n := now.Name(t.Server, t.Tool); !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
			if len(names) > 1 {
				m.Action = MigrateKeep
				m.Note = fmt.Sprintf("names %d tools that %s spells differently (%s): one rule cannot name them; write one rule per tool", len(m.Before), now, strings.Join(names, ", "))
				out = append(out, m)
				continue
			}
			m.New = names[0]
		} else {
			// A raw server key in the server part.
			if parsed.HasTool && parsed.Tool != "*" && !strings.Contains(parsed.Tool, "*") {
				continue // a whole name of no known tool
			}
			var key string
			for _, t := range tools {
				if t.Server == parsed.Server && mcpname.ClaudeNormalize(t.Server) != t.Server {
					key = t.Server
					break
				}
			}
			if key == "" {
				continue
			}
			m.WrittenFor = "raw server key"
			for _, t := range tools {
				if t.Server == key {
					m.Before = append(m.Before, t)
				}
			}
			m.New = mcpname.Prefix + mcpname.ClaudeNormalize(key) + strings.TrimPrefix(text, mcpname.Prefix+key)
		}
		m.After = matchesNow(r.Kind, m.New)
		for _, t := range m.After {
			if !slices.Contains(m.Before, t) {
				m.Extra = append(m.Extra, t)
			}
		}
		switch {
		case len(m.After) == 0:
			m.Action = MigrateKeep
			m.Note = fmt.Sprintf("%s matches nothing under %s either (this rule form is not supported there)", m.New, now)
		case m.Grants(r.Kind) && !allowShared:
			m.Action = MigrateKeep
			m.Note = fmt.Sprintf("%s would also grant %s (a shared name): not rewritten without --allow-shared", m.New, toolList(m.Extra))
		case len(m.Extra) > 0 && r.Kind == permission.ClaudeAllow:
			m.Action = MigrateRewrite
			m.Note = fmt.Sprintf("also grants %s (a shared name; --allow-shared)", toolList(m.Extra))
		case len(m.Extra) > 0:
			m.Action = MigrateRewrite
			m.Note = fmt.Sprintf("also restricts %s (a shared name)", toolList(m.Extra))
		default:
			m.Action = MigrateRewrite
		}
		out = append(out, m)
	}
	return out
}

func toolList(ts []mcpname.ClaudeTool) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.Server + "/" + t.Tool
	}
	return strings.Join(parts, ", ")
}

// ToolList is "server/tool, …" ("" for none).
func ToolList(ts []mcpname.ClaudeTool) string { return toolList(ts) }

// ClaudeMigratedRule is one planned migration with its rule's kind, for
// ClaudeMigrationOverrides (the migrations of every rule file of a run).
type ClaudeMigratedRule struct {
	Kind permission.ClaudeKind
	ClaudeMigration
}

// ClaudeOverride is a migrated deny or ask rule that would override a migrated allow rule:
// both now match Tools, and Claude Code checks deny, then ask, then allow (permission.ClaudeDecide),
// so the allow no longer decides them. Restrict and Allow index ClaudeMigrationOverrides' input.
type ClaudeOverride struct {
	Restrict, Allow int
	Tools           []mcpname.ClaudeTool
}

// ClaudeMigrationOverrides returns, for every migrated (MigrateRewrite) deny or ask rule and
// every migrated allow rule whose After tools overlap, the override: before the migration
// neither spelling matched under the current release, so nothing changed between the two, and
// after it the restriction wins (on the fixture: the user deny mcp__foo.bar__deploy.prod and the
// lab local allow mcp__foo_bar__deploy.prod, both → mcp__foo_bar__deploy_prod: 1.0.51 ran
// deploy.prod, since its deny was in a spelling it did not match; 2.1.332 after both rewrites
// does not offer it). Pairs come in input order (restriction-major).
func ClaudeMigrationOverrides(ms []ClaudeMigratedRule) []ClaudeOverride {
	var out []ClaudeOverride
	for i, r := range ms {
		if r.Action != MigrateRewrite || (r.Kind != permission.ClaudeDeny && r.Kind != permission.ClaudeAsk) {
			continue
		}
		for j, a := range ms {
			if a.Action != MigrateRewrite || a.Kind != permission.ClaudeAllow {
				continue
			}
			var both []mcpname.ClaudeTool
			for _, t := range r.After {
				if slices.Contains(a.After, t) {
					both = append(both, t)
				}
			}
			if len(both) > 0 {
				out = append(out, ClaudeOverride{Restrict: i, Allow: j, Tools: both})
			}
		}
	}
	return out
}
