// Package audit holds what every agent's permission-rule audit shares (audit.md): Rendering
// renders one format (csv, html, json, sarif) of an audit's documents into memory through
// package reports, so nothing is written when rendering fails; ReadBaseline reads a
// --baseline (either audit's SARIF log or JSON document, over reports.JSONPair).
//
// The rule semantics are the agents' rooms' plug-ins (audit*.go in the agent's package under
// store/: its rule files, how a rule matches a tool now and before, its report, documents and
// CSV columns, its fix --rules migration), declared by agent.Agent.Audit. A plug-in builds
// its documents with package reports and hands them to Rendering; audit sits above the rooms.
// The command layer picks the agent (--agent, agent.Agent.Audit), parses the flags,
// prints, and writes the rendered bytes.
package audit
