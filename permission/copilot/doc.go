// Package copilot is GitHub Copilot CLI's permission-rule knowledge (issue 26 items 3 and 4), as
// pure functions over bytes and tool lists: no file system walk, no command, no store. audit
// --agent copilot (agent/copilot/audit.go, on the shared rule-audit layer: AuditEvaluation) and
// fix --rules --agent copilot (agent/copilot/rulefix.go: PlanRewrite per rule) call it.
//
// Sources of the facts: the JavaScript of 1.0.39 and 1.0.40 (@github/copilot: the rule regexp,
// commander's option parsing, the MCP permission check, the tool filters, custom agents' tool
// lists, the persisted grants) and the recorded rule matrix of 1.0.39, 1.0.40 and 1.0.102
// (fixtures/README.md, copilot-real; rules.tsv), whose every row TestRuleMatrix predicts.
//
// # API shape
//
// Rules and where they come from (Rule, with Source, Pos and, when it can be rewritten in place,
// ToolSpan):
//
//	ParseRule(text) (Rule, error)                       the grammar ^([a-zA-Z0-9_./@-]+)(\(([^)]+)\))?$
//	SplitList(value) []string                           commander's comma split at bracket depth 0
//	ExtractShell(path, src) ([]Invocation, []Problem)   every copilot invocation of a script or alias file
//	ExtractYAML(path, src) ([]Invocation, []Problem)    … of a CI workflow (run: scalars are shell)
//	Extract(path, src)                                  by name: *.yml/*.yaml → YAML, else shell
//	ParsePermissionsConfig(path, src) ([]Rule, []Problem)  locations.<dir>.tool_approvals[]
//	ParseAgent(path, src) ([]Rule, []Problem)           a custom agent's front matter tools:
//	ParseSkill(path, src) ([]Rule, []Problem)           a skill's front matter allowed-tools
//	Locations(home, workspace) []Location               where those files are (globs)
//
// Per release (ReleaseOf(version): naming era, filter and dispatch behaviour):
//
//	Register(rel, tools) []Registered                   names, cut, counters, shadowing
//	Matches(rel, rule, tool, registered) bool           one rule × one tool
//	Matching(rel, rule, tools) []mcpname.CopilotTool    every tool a rule matches
//	Evaluate(rel, Setup) Result                         per tool the outcome (ran, denied, not
//	                                                    approved, not offered, shadowed,
//	                                                    unreachable), per call what it reached
//	Meant(rule, tools) []mcpname.CopilotTool            the raw tools a rule was written for
//	Lost(rel, rule, tools) (meant, lost)                a rule whose tool part can never match
//	PlanRewrite(rel, rule, tools) RewritePlan           the byte-exact edit of its tool part, or
//	                                                    why it is held back
//	RunsOf(rules, runs, orAll) []Run                    one run per copilot command line: its
//	                                                    flags and the rules of every run
//	AuditEvaluation(AuditInput, now, before)            the shared audit layer's evaluation,
//	                                                    tool outcomes one run at a time
//
// Positions: Pos.Line and Pos.Col are 1-based (Col counts bytes); offsets are byte offsets into
// the file given. A Problem names the file, line, column and why an invocation or entry could
// not be read (a variable the shell expands at run time, a YAML scalar whose bytes do not map to
// its value, a rule outside the grammar).
package copilot
