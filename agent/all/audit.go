package all

import "github.com/sessionfix/sessionfix/agent"

// Auditors lists the agents whose permission rules sessionfix audit reads (agent.Auditor), in
// list order.
func Auditors() []agent.Agent {
	var out []agent.Agent
	for _, a := range Agents {
		if AuditOf(a) != nil {
			out = append(out, a)
		}
	}
	return out
}

// The capabilities the commands read as data: each is the room's (found by type assertion on
// a, which may be nil) or nil when the agent has none.

// AuditOf is a's permission-rule audit (agent.Auditor).
func AuditOf(a agent.Agent) *agent.Audit {
	if x, ok := a.(agent.Auditor); ok {
		return x.Audit()
	}
	return nil
}

// RuleFixOf is a's rule-file migration of fix --rules (agent.RuleFixer).
func RuleFixOf(a agent.Agent) *agent.RuleFix {
	if x, ok := a.(agent.RuleFixer); ok {
		return x.RuleFix()
	}
	return nil
}

// HelpOf is what --help says of a (agent.Helper).
func HelpOf(a agent.Agent) *agent.Help {
	if x, ok := a.(agent.Helper); ok {
		return x.Help()
	}
	return nil
}

// WithHelp are the agents with a Help (agent.Helper), Default first, then the list's order.
func WithHelp() []agent.Agent {
	var out []agent.Agent
	if HelpOf(Default) != nil {
		out = append(out, Default)
	}
	for _, a := range Agents {
		if a != Default && HelpOf(a) != nil {
			out = append(out, a)
		}
	}
	return out
}

// SettingsOf is a's settings pass (agent.SettingsPasser).
func SettingsOf(a agent.Agent) *agent.Settings {
	if x, ok := a.(agent.SettingsPasser); ok {
		return x.Settings()
	}
	return nil
}

// OptionsOf are a's own flags of scan, fix and check (agent.Optioner).
func OptionsOf(a agent.Agent) []agent.Option {
	if x, ok := a.(agent.Optioner); ok {
		return x.Options()
	}
	return nil
}

// SentAsOptionOf is check's flag naming the release a's SentAs takes (agent.SentAser).
func SentAsOptionOf(a agent.Agent) *agent.Option {
	if x, ok := a.(agent.SentAser); ok {
		return x.SentAsOption()
	}
	return nil
}
