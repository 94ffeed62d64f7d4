package claude

import (
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store/agent"
)

// ProjectOption is fix --rules' --project (the project whose .claude/settings*.json are
// migrated).
const ProjectOption = "project"

// RuleFix is Claude Code's permission-rule migration as fix --rules offers it (issue 11 item
// 5; agent.RuleFix): rules of the user, project and local settings and ~/.claude.json's legacy
// allowedTools written in an older release's spelling, rewritten to the spelling that names the
// same raw tool under --claude-version (PlanRuleFiles).
var RuleFix = &agent.RuleFix{
	What:  "the Claude Code rule migration",
	Rules: "Claude Code rules",
	Usage: "rewrite legacy-spelled Claude Code permission rules (settings.json, settings.local.json, ~/.claude.json allowedTools) to the current spelling; without it rule files are never written",
	Options: []agent.Option{
		{Name: VersionOption, Usage: "with --rules: the Claude Code release whose spelling and matching the rules are migrated to (default: " + mcpname.ClaudeLatestVersion + ")"},
		{Name: ProjectOption, File: true, Usage: "with --rules: the project whose .claude/settings*.json are migrated (default: the current directory)"},
		{Name: ProjectKeyOption, Usage: "with --rules: the project directory as Claude Code saw it (its key in ~/.claude.json), for copies given as PATH"},
		{Name: ClaudeJSONOption, File: true, Usage: "with --rules: the ~/.claude.json whose projects[*].allowedTools are migrated"},
	},
	Uses: []string{AllowSharedOption},
	Help: `

CLAUDE CODE RULES (--rules): a rule written in an older release's spelling matches nothing under
the current one (mcp__foo.bar__deploy.prod in deny no longer denies deploy.prod from 1.0.51 on).
fix --rules --inventory FILE plans, for every rule of the user, project and local settings and
the legacy allowedTools of ~/.claude.json that names an inventory tool only in a legacy spelling
(a whole name of an older naming era, or a raw server key), the spelling that names the same raw
tool under --claude-version, and shows each rule with what it matched before and what the new
rule matches. A rewrite that would also grant a tool the old rule did not (a name two raw tools
share) is kept unless --allow-shared; for deny and ask it is made and noted. A migrated deny or
ask rule that would override a migrated allow rule of the same tool (deny, then ask, then allow:
both legacy spellings matched nothing, after the rewrite the restriction wins) is flagged CONFLICT
on both rules. Managed settings are
read, never written. With --apply the rule strings are replaced byte for byte (comments,
formatting and every other byte kept), with backups in a run that sessionfix undo restores.
fix --rules rewrites only rule files; fix without --rules never writes them.`,
}
