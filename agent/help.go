package agent

// Help is what an agent's room says of the agent in sessionfix's --help texts (and one heading
// of scan's report): cmd/sessionfix assembles the agent-neutral parts of scan's and fix's
// descriptions, their examples and the --inventory/--discover usages with these phrases (agent/all's order; the default agent,
// agent/all.Default, first where the text names one). Every phrase is inserted as is: it may
// hold the line breaks of the help text it goes into, and starts and ends without a space or
// punctuation unless a field says otherwise. An empty field adds nothing.
type Help struct {
	// Dir is the agent's home directory as a user writes it ("~/.acme"): the PATH of the
	// default agent's examples, the settings files read under a PATH (PATH/<base of Dir>/
	// settings.json) and the linked-directory example of scan's description.
	Dir string
	// Roots says where the agent's stores are when no PATH is given (scan's "default: …" for
	// the default agent, "with --agent <ID>, …" for the others): "the Acme home's sessions/,
	// $ACME_HOME else ~/.acme".
	Roots string
	// Stores names the agent's stores in scan's list of what is searched ("Acme
	// transcripts"); the list is joined with ", " and a last " and ".
	Stores string
	// Home is what a PATH naming the agent's home is, in scan's list of what a PATH may be
	// ("an Acme home (its own config.toml is used)").
	Home string
	// Chats is a directory of one project's sessions, for the default agent's examples
	// ("~/.acme/projects/app/sessions").
	Chats string
	// Scan and Fix are the agent's own examples of scan and fix (after the default agent's
	// generic ones).
	Scan, Fix []Example
	// Rewrite is the agent's paragraph of fix's description: how a name in its stores is
	// rewritten and from where the raw identities come (lines broken, no final newline). The
	// default agent's opens fix's generic paragraph on byte-exact rewriting (" Provider-safe
	// names … stay byte for byte" follows it on the same line).
	Rewrite string
	// SortsByMtime: the agent lists its sessions by mtime (fix's --help gives it as the reason
	// a rewritten file keeps its mtime).
	SortsByMtime bool
	// Kept says which of the agent's names a provider rejects are kept, in fix's list of kept
	// names ("an Acme call nothing attributes").
	Kept string
	// Identities says where the agent's stores record raw MCP identities, in the heading of
	// scan's identity table ("Acme invocation records"; the list is joined with ", ").
	Identities string
	// Registers names the default agent's release whose spelling of a name fix writes, in the
	// app's description ("Acme 1.2.3").
	Registers string
	// Repair names the default agent's rewrite in check's description ("an Acme repair").
	Repair string
	// Check is the agent's sentences of check's description (which of its names is checked).
	Check string
	// Inventory ends --inventory's usage for the agent whose names an inventory decides
	// ("to name Acme calls as Acme does").
	Inventory string
	// Discover is --discover's usage, from the agent whose Prepare starts the MCP servers
	// (the first agent that has it).
	Discover string
	// Names says, for the names command's description, whose naming functions its columns
	// normalized, mcp_normalized and legacy show (the default agent's: mcpname's Normalize,
	// Classify's Registered, Legacy) and what each gives, as a phrase after "its class
	// (docs/naming.md) and what " (lines broken, no final period).
	Names string
	// NamesExamples are the names command's examples after its generic ones (a vector file of
	// the agent's names, say).
	NamesExamples []Example
}

// Example is one example line of a command's --help: the arguments after "sessionfix CMD"
// and an optional comment (aligned by cmd).
type Example struct {
	Args, Comment string
}
