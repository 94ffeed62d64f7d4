// Package audit holds what every agent's permission-rule audit shares (audit.md): Rendering
// renders one format (csv, html, json, sarif) of an audit's documents into memory through
// package reports, so nothing is written when rendering fails; ReadBaseline reads a
// --baseline (either audit's SARIF log or JSON document, over reports.JSONPair).
//
// It is also the rule-audit engine (issue 24 item 2; engine.go): Build takes one agent's
// rules.Audit (its rules, tools and Semantics now and before, from package permission/rules'
// contract), evaluates every rule × tool (rules.Evaluate), and lays out the pairs (lost
// restrictions first, or the agent's Order), the tools, the JSON document, the HTML page, the
// SARIF results and rules, the summary line, the LOST RESTRICTION lines and the --fail-on
// counts. An audit whose reports keep a shape of their own (columns, JSON members, page and
// summary wording scripts already read) declares it as a rules.Layout (layout.go): the
// engine still computes every cell (rules.Cell), the layout chooses, names and orders them.
// Agents on the layer (agent.Audit.Rules) supply knowledge only; the command layer calls
// Build and writes what it gives, as for every audit.
// An audit may still be its room's own plug-in (declared by agent.Audit.Run; one agent's
// is, docs/layout.md): it builds its own documents with package reports and hands them to
// Rendering; audit sits above the rooms.
package audit
