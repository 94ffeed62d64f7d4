package rules

// Layout is the shape of an agent's reports when they are not the engine's default (an audit
// whose CSV columns, JSON members or page wording scripts and users already read): which
// columns the tables have, which members the JSON document and its objects have, in which
// order, how the HTML page and the summary are worded. Every value of a cell or member is
// still the engine's, computed from the Result (Cell); the layout only chooses and names
// them. A nil Audit.Layout is the default layout (docs/audit.md "The shared rule-audit
// document"); a zero field of a Layout is the default's part.
type Layout struct {
	// PairColumns and ToolColumns are the pairs and tools tables' columns (CSV, HTML).
	PairColumns, ToolColumns []Field
	// Document are the JSON document's members in order; Rule, Pair, Tool, Verdict and
	// Count the members of its rules, pairs, tools, a tool's verdict and its counts (the
	// document cells CellRules, CellPairs, CellTools, CellVerdictNow/Before, CellCounts).
	Document, Rule, Pair, Tool, Verdict, Count []Field
	Page                                       Page
	// SARIF words the lost, gained and refused SARIF rules (Class "lost", "gained",
	// "refused"); a class not given keeps the default words.
	SARIF []SARIFText
	// Message words the SARIF result of a pair of class "lost", "gained" or "refused" (nil:
	// the default message). It is the agent's sentence only: the engine locates the result,
	// fingerprints it and fills the fleet finding.
	Message func(class string, rule Rule, tool ToolResult, p Pair) string
	// LostLine words a LOST RESTRICTION line said on standard error (nil: the default line),
	// given the lost pair's rule and tool and the points' labels now and before.
	LostLine func(rule Rule, tool ToolResult, now, before string) string
	// Summary are the counts of the summary line after "K pairs listed:" (default: lost
	// with the restrictions, gained, refused; then the tools with another outcome and the
	// findings): CellCountLost, CellCountGained, CellCountRefused, CellCountChanged,
	// CellCountFindings, in that order; K counts the pairs listed (every pair with
	// --all-pairs), and the inventory is said printable.
	Summary []Cell
	// Lead are lines said on standard error before the summary ("audit: no permission rule
	// found …"); Brief words the summary line without the releases, restrictions, changed
	// outcomes and findings: "audit: N rules, M tools (inventory: X), K pairs listed: L lost,
	// G gained, R refused", K counting the pairs listed (every pair with --all-pairs).
	Lead  []string
	Brief bool
	// NoLostLines: the LOST RESTRICTION lines are not said on standard error.
	NoLostLines bool
}

// Page is the HTML page's wording where it is not the default.
type Page struct {
	// Title is the page's title; Header follows "Generated … by sessionfix V; " in the first
	// header line (default: "<Name> <now> now, <before> before").
	Title, Header string
	// Meta are the header lines between the first and the rule files' (default: "<Label>:
	// <Value>" of each fact with a Label).
	Meta []string
	// FilesLabel and Files are the rule files' header line (default "Rule files" and "path
	// (scope), …", "none found" without any).
	FilesLabel, Files string
	// Counts are the counts at the top, in order (count cells; default: lost restrictions,
	// rules, tools, lost, gained, findings).
	Counts []Cell
	// LostTitle and LostEmpty are the lost restrictions' section title and what it says when
	// empty; PairFacets the pairs table's facets.
	LostTitle, LostEmpty string
	PairFacets           []string
	// Notes follow the problems and Audit.Notes at the foot of the page.
	Notes []string
}

// SARIFText is the short and full description of one SARIF rule class.
type SARIFText struct {
	Class, Short, Full string
}

// Field is one column of a table or one member of a JSON object: its header or key, the
// engine's value for it, and, in JSON, whether it is left out when empty ("", 0, false, an
// empty list).
type Field struct {
	Key  string
	Cell Cell
	Omit bool
}

// Cell is a value the engine computes for a column or a JSON member. Which ones apply depends
// on where the field is: a pair's (rule, tool and pair cells), a rule's (rule cells), a tool's
// (tool cells, the now/before cells of its verdicts), a verdict's (verdict cells), the counts'
// (count cells) or the document's (document cells).
type Cell uint8

// Cells.
const (
	_ Cell = iota
	// Rule cells: the rule's file, scope, key, index, line, column, text, kind, the server it
	// is scoped to (Rule.Server), its effect ("grants", "restricts") and Ignored.
	CellFile
	CellScope
	CellKey
	CellIndex
	CellLine
	CellColumn
	CellRule
	CellKind
	CellRuleServer
	CellEffect
	CellIgnored
	// Tool cells: the raw server key and tool, the inventory source, the tool's name now and
	// before, its attribute named by the field's key (ToolInfo.Attrs, CellAttr), its verdicts
	// (JSON objects of Layout.Verdict members) and, per point, the decision, the deciding
	// rule's text, that text or else the note in parentheses, the outcome, the note and the
	// tools sharing its name.
	CellServer
	CellTool
	CellSource
	CellNameNow
	CellNameBefore
	CellAttr
	CellVerdictNow
	CellVerdictBefore
	CellDecisionNow
	CellRuleNow
	CellRuleOrNoteNow
	CellOutcomeNow
	CellNoteNow
	CellSharedNow
	CellDecisionBefore
	CellRuleBefore
	CellRuleOrNoteBefore
	CellOutcomeBefore
	// Pair cells: the match now and before, the change.
	CellMatchNow
	CellMatchBefore
	CellChange
	// Verdict cells: the name, decision, deciding rule's text, its "file:line:col" and its
	// site "file:line:col key[index]" (the key alone when the index is negative), the note,
	// the rules refused on the way (Verdict.Refused: their texts), the outcome, the tools
	// sharing the name ("server/tool"; CellSharedTools: [{"server", "tool"}]), whether another
	// tool answers the name (Verdict.Unreachable).
	CellName
	CellDecision
	CellDecidingRule
	CellDecidingRuleAt
	CellDecidingRuleSite
	CellNote
	CellRefused
	CellOutcome
	CellSharedWith
	CellSharedTools
	CellUnreachable
	// Count cells (also the page's counts): rules, tools, pairs listed by default, pairs
	// listed (every pair with --all-pairs), lost, lost restrictions, gained, refused (now
	// NotApplied), tools whose outcome changed, findings.
	CellCountRules
	CellCountTools
	CellCountPairs
	CellCountListed
	CellCountLost
	CellCountLostRestrictions
	CellCountGained
	CellCountRefused
	CellCountChanged
	CellCountFindings
	// Document cells: when generated, the agent's id, the labels now and before, the fact
	// named by the field's key (Audit.Facts), the inventory, the counts (an object of
	// Layout.Count members), the rule files read ([{path, scope}]), the rules, the rules
	// shadowed (Audit.Shadowed), the tools, the pairs listed, the lost restrictions, the
	// findings, the notes, the problems, the re-dispatch findings.
	CellGenerated
	CellAgent
	CellNow
	CellBefore
	CellFact
	CellInventory
	CellCounts
	CellFiles
	CellRules
	CellShadowed
	CellTools
	CellPairs
	CellLostRestrictions
	CellFindings
	CellNotes
	CellErrors
	CellRedispatch
)

// FactType is the JSON type of a Fact or a tool's attribute.
type FactType uint8

// Fact types: Text (Value, a string), List (List, an array of strings; nil is null), Flag
// (Flag, a boolean).
const (
	Text FactType = iota
	List
	Flag
)
