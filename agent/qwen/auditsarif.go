package qwen

import (
	"fmt"

	"github.com/sessionfix/sessionfix/agent/qwen/settings"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/reports"
)

// SARIFRules are the Qwen Code audit's SARIF rules, in this order; ids are stable.
var SARIFRules = []reports.SARIFRule{
	{ID: "sessionfix/audit/lost", Name: "AuditLost", Short: "a permission rule no longer matches a tool it matched before the rename",
		Full: "The rule matched the tool's legacy name before the provider-safe rename and matches no more (or is refused): a deny, ask or exclude rule lost is a restriction lost, an allow rule lost a permission lost (docs/audit.md)."},
	{ID: "sessionfix/audit/gained", Name: "AuditGained", Short: "a permission rule now matches a tool it did not match before the rename",
		Full: "The rule matches the tool's registered name now but did not match its legacy name: it grants or restricts more than before (docs/audit.md)."},
	{ID: "sessionfix/audit/refused", Name: "AuditRefused", Short: "an allow rule names the tool but the registry ambiguity guard refuses the grant",
		Full: "Qwen Code's IsMcpAllowAmbiguous refuses an allow rule that names the tool, so the tool is not allowed by it (qwen-reference.md)."},
}

// SARIF turns an audit report into SARIF results: one per lost pair (level "error"),
// gained pair ("warning") and refused pair ("warning"; a refused pair that matched before is
// also lost, so two results). Located at the settings (or subagent) file and the line of the
// rule (settings.Origin); the message names the rule as written (never $VAR-expanded), its
// key, the tool and the match now and before. Fingerprint: class, file, key, rule text and the
// tool's raw identity, without line or index, so editing other rules keeps it.
func (r *Report) SARIF() []reports.SARIFResult {
	var out []reports.SARIFResult
	for _, p := range r.Pairs {
		ru, t := r.Rules[p.Rule], r.Tools[p.Tool]
		if p.Change == ChangeLost {
			out = append(out, auditResult("lost", "error", ru, t, p))
		}
		if p.Change == ChangeGained {
			out = append(out, auditResult("gained", "warning", ru, t, p))
		}
		if p.Now == permission.Refused {
			out = append(out, auditResult("refused", "warning", ru, t, p))
		}
	}
	return out
}

func auditResult(class, level string, ru settings.Rule, t Tool, p Pair) reports.SARIFResult {
	var what string
	switch class {
	case "lost":
		what = fmt.Sprintf("matched it before the rename (legacy name %s) and now %s", t.Legacy, nowWord(p.Now))
	case "gained":
		what = fmt.Sprintf("did not match it before the rename (legacy name %s) and matches it now", t.Legacy)
	default:
		what = "names it, but the registry ambiguity guard refuses the grant"
	}
	msg := fmt.Sprintf("%s rule %q (%s) %s tool %s (server %s, registered name %s): %s.",
		ru.Kind, ru.Literal, ruleKey(ru.Origin), class, t.Identity.Tool, t.Identity.Server, t.Name, what)
	path := reports.SARIFPath(ru.File)
	site := fmt.Sprintf("%s %s line %d", ru.Scope, ruleKey(ru.Origin), ru.Line)
	return reports.SARIFResult{RuleID: "sessionfix/audit/" + class, Level: level, Message: msg, Path: path, Line: int64(ru.Line),
		Fingerprint: reports.SARIFFingerprint("audit", class, path, ru.Key, ru.Literal, t.Raw),
		Finding:     reports.Finding{Store: ru.File, Site: site, Class: class, Name: t.Legacy, New: t.Name, RuleKind: string(ru.Kind), Rule: ru.Literal}}
}

func nowWord(m permission.Match) string {
	if m == permission.Refused {
		return "is refused"
	}
	return "matches no more"
}

// ruleKey is "key[index]" (the key alone when the origin is no list entry).
func ruleKey(o settings.Origin) string {
	if o.Index < 0 {
		return o.Key
	}
	return fmt.Sprintf("%s[%d]", o.Key, o.Index)
}
