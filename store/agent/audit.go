package agent

// Audit describes an agent's permission-rule audit (sessionfix audit --agent <ID>): the rule
// semantics themselves are a plug-in of the agent's room (its audit*.go files: which rule files
// it reads, how a rule matches a tool now and before, the report and its documents, the fix
// --rules migration), which the command reaches through the room's package; this is what the
// command line needs to know of it without naming the agent. A room never imports package
// audit (the generic document writers and baselines sit above the rooms).
type Audit struct {
	// Reads says what the audit reads, for audit --agent's usage ("Acme rule files"): the
	// flag's usage lists "<ID> (<Reads>)" for every agent with an Audit, in list order.
	Reads string
	// Flags are the audit flags only this agent's audit takes, in the order they are checked:
	// an audit of another agent refuses each one that is set, naming this agent (exit 2). A
	// name is one of audit's own flags or of Options.
	Flags []string
	// Options are the audit flags this room declares (its own rule-file inputs, releases …):
	// the command adds them after audit's own flags and --agent, in list order, built as
	// Agent.Options are (Bool, Repeatable, File; Before is not used). The ones another agent's
	// audit must refuse are also in Flags.
	Options []Option
}
