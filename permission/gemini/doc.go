// Package gemini is Gemini CLI's rule knowledge for the permission audit and the rule migration
// (issue 25 items 4 and 5): the grammar of its rule files, per release which tools each rule
// matches and what happens to each tool (hidden, denied, ask, ran), what a release only warns
// about or rejects, and the byte-exact rewrite of a rule to the spelling that matches the same
// raw tools in a newer release. It is pure: it reads no file (callers hand it the bytes) and
// starts nothing; the shared audit engine calls it with the files and tools it gathered
// (docs/gemini.md says where they are). Sources: fixtures/gemini-real (releases 0.10.0, 0.32.1, 0.33.2, 0.61.0 run against a
// stand-in; rules/outcomes.json is its matrix, which TestOutcomesMatchTheRecording replays) and
// the npm packages read release by release (Features names, per behaviour, the first release
// seen doing it and the one before that does not).
//
// # API
//
// Inputs, parsed from bytes with positions (file:line:col, 1-based, columns in bytes):
//
//	ParseSettings(path, data, scope) (*SettingsFile, error)   // settings.json (JSONC); *ParseError when the CLI ignores the file
//	ParsePolicy(path, data, scope) *PolicyFile                // policies/*.toml; SyntaxError set when no release reads it
//	Scope: ScopeSystemDefaults, ScopeUser, ScopeWorkspace, ScopeSystem
//	SettingsFile: Exclude, Allowed, Core (tools.*), LegacyExclude (v1 top-level excludeTools),
//	              Servers (mcpServers: Include/Exclude tools, Trust), MCPExcluded — each an Entry
//	              {Value, Key, Index, Pos, Start, End: the token's bytes}
//	PolicyFile:   Rules []*PolicyRule {Index, Pos, ToolNames []Entry, ToolNameList, MCPName *Entry,
//	              Decision, Priority, Modes, Interactive, Subagent, ArgsDependent, Annotations}
//
// Releases and modes:
//
//	ParseRelease("0.32.1") (Release, error); MustRelease; Latest (0.61.0)
//	FeaturesOf(Release) Features   // naming era, policy era, and each behaviour's boundary
//	ParseMode("default"|"auto_edit"|"yolo") (Mode, error)
//	(*PolicyFile).Check(Release) FileCheck   // Rejected + Reason + Dropped (schema), Ignored, Warnings
//
// The outcome model:
//
//	Evaluate(Config{Release, Mode, Interactive, Settings, Policies, Tools, UntrustedWorkspace}) *Result
//	  Config.Tools are raw tools {Server, Name} in registration order (it decides who got a
//	  bare name before 0.33.0); the settings of every scope are merged as the CLI merges them.
//	Result.Tools    []Verdict{Tool, Name (declared), Outcome, By *RuleRef (deciding rule), Why,
//	                          Matches []*RuleRef (every rule applying), ArgsDependent}
//	Result.Rules    []*RuleResult{Ref, Matches []Tool, Ignored (why the release does not apply it)}
//	Result.Findings []Finding{Kind, Pos, Rule, Message, Dropped, Tools}: rejected-file (a policy
//	                file the release drops whole, with every rule it drops), deprecated (what the
//	                release only warns about, at the value), rule-error, bare-exclude (a bare
//	                tools.exclude entry hiding tools of several servers), ignored (a v1
//	                excludeTools no longer read), settings (entries that are no rule)
//	RuleRef{ID (stable across releases), Kind, Scope, Pos, Text, Decision, Entry, Policy, File}
//	Outcome: Hidden, Denied, Ask, Ran (Strength orders them)
//
// Now versus before: the audit binds two releases as rules.Semantics (AuditEvaluation) and
// the shared engine compares them; the tests' Compare (compare_test.go) pairs two Results
// directly, lost first.
//
// The migration (fix --rules):
//
//	PlanMigration(Migration{From, To, Mode, Interactive, Settings, Policies, Tools}) []*Rewrite
//	Rewrite{Rule, File, Old, New, Edits []Edit{Start, End, New}, Intended, Now, After, Held, Why}
//	ApplyEdits(data, edits) ([]byte, error)   // the file's new bytes (only the edited spans change)
//	  A rule whose tools under To differ from what it meant under From is rewritten to
//	  mcpName + the sanitized tool part (toolName = "*" for every tool of a server), else to the
//	  name To declares; the rewritten file is evaluated again and a rewrite that would match a
//	  tool the rule did not mean is held back with the reason (never widen), as is a rule no
//	  spelling of To can address or a file To rejects.
//
// What is not modelled: the plan approval mode, arguments (a rule with argsPattern, commandPrefix
// or commandRegex is listed in Verdict.ArgsDependent and decides no outcome), tool annotations
// (a rule with toolAnnotations decides nothing: the server's annotations are not known),
// extensions' policies and excludeTools, safety checkers (validated, never run), mcp.allowed and
// the headless auto-allow of servers; releases between two read ones are placed by the first
// release read (Features).
package gemini
