package claude

import (
	"fmt"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/reports"
)

// ClaudeSARIFRules are audit --agent claude's SARIF rules: the ids every agent's audit uses
// (the default agent's room's SARIFRules), in the same order, with Claude Code's meaning.
var ClaudeSARIFRules = []reports.SARIFRule{
	{ID: "sessionfix/audit/lost", Name: "AuditLost", Short: "a Claude Code permission rule no longer matches a tool it matched under the earlier release",
		Full: "The rule matched the tool as the earlier release (--before) named it and matched rules, and matches nothing of it under the current one (--claude-version): a deny or ask rule lost is a restriction lost (fix it with sessionfix fix --rules), an allow rule lost a permission lost (docs/claude.md, Rules: audit --agent claude)."},
	{ID: "sessionfix/audit/gained", Name: "AuditGained", Short: "a Claude Code permission rule now matches a tool it did not match under the earlier release",
		Full: "The rule matches the tool under the current release and did not under the earlier one: it grants or restricts more than before (docs/claude.md, Rules: audit --agent claude)."},
	{ID: "sessionfix/audit/refused", Name: "AuditRefused", Short: "a Claude Code permission rule names the tool but the current release does not apply it",
		Full: "The rule names the tool and is ignored: an allow rule of an untrusted project's .claude/settings.json (2.1.332 applies only its deny and ask rules), or an ask rule under a release without an ask list (1.0.51)."},
}

// SARIF turns a Claude audit report into SARIF results, as the default agent's (*Report).SARIF does for
// the default agent's audit: one per lost pair ("error"), gained pair ("warning") and pair whose rule the
// current release ignores (refused, "warning"; such a pair that matched before is also lost:
// two results). Located at the rule file and the line of the rule's string token; the message
// names the rule as written, its key and index, the tool, its names now and before and the
// tool's outcome now. Fingerprint: class, file, key, rule text and the tool's raw identity
// (mcpname.Raw), as the other audit's, so a JSON baseline of either audit gives the same ones
// (audit.ReadBaseline).
func (r *ClaudeReport) SARIF() []reports.SARIFResult {
	var out []reports.SARIFResult
	for _, p := range r.Pairs {
		if p.Change == permission.ChangeLost {
			out = append(out, claudeAuditResult(r, "lost", "error", p))
		}
		if p.Change == permission.ChangeGained {
			out = append(out, claudeAuditResult(r, "gained", "warning", p))
		}
		if p.Now == permission.ClaudeIgnored {
			out = append(out, claudeAuditResult(r, "refused", "warning", p))
		}
	}
	return out
}

func claudeAuditResult(rep *ClaudeReport, class, level string, p ClaudePair) reports.SARIFResult {
	ru, t := rep.Rules[p.Rule], rep.Tools[p.Tool]
	var what string
	switch class {
	case "lost":
		what = fmt.Sprintf("matched it under %s (as %s) and %s under %s (as %s)", rep.Before, t.Before.Name, claudeNowWord(p.Now), rep.Now, t.Now.Name)
	case "gained":
		what = fmt.Sprintf("did not match it under %s (as %s) and matches it under %s (as %s)", rep.Before, t.Before.Name, rep.Now, t.Now.Name)
	default:
		what = fmt.Sprintf("names it (as %s), but %s does not apply the rule", t.Now.Name, rep.Now)
	}
	msg := fmt.Sprintf("%s rule %q (%s %s[%d]) %s tool %s (server %s): %s; outcome now %s, before %s.",
		ru.Kind, ru.Text, ru.Scope, ru.Key, ru.Index, class, t.Tool, t.Server, what, t.Now.Outcome, t.Before.Outcome)
	path := reports.SARIFPath(ru.File)
	return reports.SARIFResult{RuleID: "sessionfix/audit/" + class, Level: level, Message: msg, Path: path, Line: int64(ru.Line),
		Fingerprint: reports.SARIFFingerprint("audit", class, path, ru.Key, ru.Text, mcpname.Raw(t.Server, t.Tool)),
		Finding: reports.Finding{Store: ru.File, Site: fmt.Sprintf("%s %s[%d] line %d", ru.Scope, ru.Key, ru.Index, ru.Line), Class: class,
			Name: t.Before.Name, New: t.Now.Name, RuleKind: fmt.Sprint(ru.Kind), Rule: ru.Text}}
}

func claudeNowWord(m permission.ClaudeMatch) string {
	if m == permission.ClaudeIgnored {
		return "is ignored"
	}
	return "matches nothing of it"
}
