package all

import "github.com/sessionfix/sessionfix/agent"

// Auditors lists the agents whose permission rules sessionfix audit reads (agent.Agent.Audit
// set), in list order.
func Auditors() []*agent.Agent {
	var out []*agent.Agent
	for _, a := range Agents {
		if a.Audit != nil {
			out = append(out, a)
		}
	}
	return out
}
