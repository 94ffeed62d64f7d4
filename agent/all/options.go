package all

import "github.com/sessionfix/sessionfix/agent"

// SharedOptions are the agents' own options of scan, fix and check (OptionsOf) in list order,
// one per name: an option two rooms declare (the same name: one file format both agents
// read) is one flag, made from the first declaration, its usage followed by the others'
// ("; also " …); every declaring room reads its values.
func SharedOptions() []agent.Option {
	return merged(Agents, OptionsOf)
}

// SharedAuditOptions are the rooms' audit options (agent.Audit.Options) of the agents with an
// audit, in list order, one per name, as SharedOptions (--before: the release compared
// against, declared by several).
func SharedAuditOptions() []agent.Option {
	return merged(Auditors(), func(a agent.Agent) []agent.Option { return AuditOf(a).Options })
}

// merged is of(a) of every agent of as, one option per name, later usages appended.
func merged(as []agent.Agent, of func(agent.Agent) []agent.Option) []agent.Option {
	var out []agent.Option
	at := map[string]int{}
	for _, a := range as {
		for _, o := range of(a) {
			if i, ok := at[o.Name]; ok {
				out[i].Usage += "; also " + o.Usage
				continue
			}
			at[o.Name] = len(out)
			out = append(out, o)
		}
	}
	return out
}
