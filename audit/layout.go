package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/permission/rules"
	"github.com/sessionfix/sessionfix/reports"
)

// The layout of a report (rules.Layout): the engine computes every cell (rules.Cell) and a
// layout chooses, names and orders them. value is one computed cell: a string, an integer, a
// boolean, a list of strings or an already encoded JSON value, with its text for a table.

type valueKind uint8

const (
	textValue valueKind = iota
	intValue
	flagValue
	listValue
	rawValue
)

type value struct {
	kind valueKind
	s    string
	n    int
	b    bool
	list []string
	raw  json.RawMessage
}

func str(s string) value { return value{s: s} }

// text is the value in a table cell.
func (v value) text() string {
	switch v.kind {
	case intValue:
		return strconv.Itoa(v.n)
	case flagValue:
		return strconv.FormatBool(v.b)
	case listValue:
		return strings.Join(v.list, ", ")
	case rawValue:
		return string(v.raw)
	}
	return v.s
}

// empty reports whether a member with Omit is left out.
func (v value) empty() bool {
	switch v.kind {
	case intValue:
		return v.n == 0
	case flagValue:
		return !v.b
	case listValue:
		return len(v.list) == 0
	case rawValue:
		return len(v.raw) == 0
	}
	return v.s == ""
}

func (v value) json() json.RawMessage {
	switch v.kind {
	case intValue:
		return encode(v.n)
	case flagValue:
		return encode(v.b)
	case listValue:
		return encode(v.list)
	case rawValue:
		return v.raw
	}
	return encode(v.s)
}

// encode is v as compact JSON, HTML characters unescaped (as reports.WriteJSON writes).
func encode(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage("null")
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// object is a JSON object whose members keep their order.
type object []member

type member struct {
	key string
	val json.RawMessage
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(encode(m.key))
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// cellAt is where a cell is computed: a pair (its rule and tool), a rule, a tool, a verdict.
type cellAt struct {
	rule    *rules.Rule
	tool    *rules.ToolResult
	pair    *rules.Pair
	verdict *rules.Verdict
}

func (r *Report) factValue(f rules.Fact) value {
	switch f.Type {
	case rules.List:
		return value{kind: listValue, list: f.List}
	case rules.Flag:
		return value{kind: flagValue, b: f.Flag}
	}
	return str(f.Value)
}

// cell computes c at x; key is the field's key (CellFact, CellAttr). A cell that does not
// apply where it is asked is "". The cells come in groups (rules.Cell): a rule's, a tool's
// (its own and, per point, its verdict's), a pair's, a verdict's and the counts; each group is
// one table below, asked only where its value lies in x.
func (r *Report) cell(c rules.Cell, key string, x cellAt) value {
	if f, ok := ruleCells[c]; ok && x.rule != nil {
		return f(x.rule)
	}
	if x.tool != nil {
		if v, ok := r.toolCell(c, key, x.tool); ok {
			return v
		}
	}
	if f, ok := pairCells[c]; ok && x.pair != nil {
		return f(r.Audit.Words, x.pair)
	}
	if f, ok := verdictCells[c]; ok && x.verdict != nil {
		return f(r, x.verdict)
	}
	if f, ok := countCells[c]; ok {
		return value{kind: intValue, n: f(r)}
	}
	return str("")
}

// ruleCells are the rule cells (rules.CellFile … CellIgnored).
var ruleCells = map[rules.Cell]func(ru *rules.Rule) value{
	rules.CellFile:       func(ru *rules.Rule) value { return str(ru.File) },
	rules.CellScope:      func(ru *rules.Rule) value { return str(ru.Scope) },
	rules.CellKey:        func(ru *rules.Rule) value { return str(ru.Key) },
	rules.CellIndex:      func(ru *rules.Rule) value { return value{kind: intValue, n: ru.Index} },
	rules.CellLine:       func(ru *rules.Rule) value { return value{kind: intValue, n: ru.Line} },
	rules.CellColumn:     func(ru *rules.Rule) value { return value{kind: intValue, n: ru.Column} },
	rules.CellRule:       func(ru *rules.Rule) value { return str(ru.Text) },
	rules.CellKind:       func(ru *rules.Rule) value { return str(ru.Kind) },
	rules.CellRuleServer: func(ru *rules.Rule) value { return str(ru.Server) },
	rules.CellEffect:     func(ru *rules.Rule) value { return str(effectWord(ru.Effect)) },
	rules.CellIgnored:    func(ru *rules.Rule) value { return str(ru.Ignored) },
}

// pointCell is a tool cell that is one of its verdicts' cells: now's or before's.
type pointCell struct {
	now  bool
	cell func(r *Report, v *rules.Verdict) value
}

// pointCells are the tool cells of one point's verdict (rules.CellDecisionNow …
// CellOutcomeBefore; the verdict objects, CellVerdictNow/Before, are toolCell's).
var pointCells = map[rules.Cell]pointCell{
	rules.CellDecisionNow:      {true, decisionCell},
	rules.CellRuleNow:          {true, decidingRuleCell},
	rules.CellRuleOrNoteNow:    {true, ruleOrNoteCell},
	rules.CellOutcomeNow:       {true, outcomeCell},
	rules.CellNoteNow:          {true, noteCell},
	rules.CellSharedNow:        {true, sharedCell},
	rules.CellDecisionBefore:   {false, decisionCell},
	rules.CellRuleBefore:       {false, decidingRuleCell},
	rules.CellRuleOrNoteBefore: {false, ruleOrNoteCell},
	rules.CellOutcomeBefore:    {false, outcomeCell},
}

// toolCell is tool cell c of t, and whether c is one.
func (r *Report) toolCell(c rules.Cell, key string, t *rules.ToolResult) (value, bool) {
	if p, ok := pointCells[c]; ok {
		if p.now {
			return p.cell(r, &t.Now), true
		}
		return p.cell(r, &t.Before), true
	}
	switch c {
	case rules.CellVerdictNow:
		return value{kind: rawValue, raw: r.fields(r.Audit.Layout.Verdict, cellAt{verdict: &t.Now})}, true
	case rules.CellVerdictBefore:
		return value{kind: rawValue, raw: r.fields(r.Audit.Layout.Verdict, cellAt{verdict: &t.Before})}, true
	case rules.CellServer:
		return str(t.Server), true
	case rules.CellTool:
		return str(t.Tool.Tool), true
	case rules.CellSource:
		return str(t.Source), true
	case rules.CellNameNow:
		return str(t.Now.Name), true
	case rules.CellNameBefore:
		return str(t.Before.Name), true
	case rules.CellAttr:
		if f, ok := t.Attr(key); ok {
			return r.factValue(f), true
		}
		return str(""), true
	}
	return value{}, false
}

// pairCells are the pair cells (rules.CellMatchNow, CellMatchBefore, CellChange).
var pairCells = map[rules.Cell]func(w rules.Words, p *rules.Pair) value{
	rules.CellMatchNow:    func(w rules.Words, p *rules.Pair) value { return str(w.OfMatch(p.Now)) },
	rules.CellMatchBefore: func(w rules.Words, p *rules.Pair) value { return str(w.OfMatch(p.Before)) },
	rules.CellChange:      func(_ rules.Words, p *rules.Pair) value { return str(string(p.Change)) },
}

// verdictCells are the verdict cells (rules.CellName … CellUnreachable).
var verdictCells = map[rules.Cell]func(r *Report, v *rules.Verdict) value{
	rules.CellName:             func(_ *Report, v *rules.Verdict) value { return str(v.Name) },
	rules.CellDecision:         decisionCell,
	rules.CellDecidingRule:     decidingRuleCell,
	rules.CellDecidingRuleAt:   func(r *Report, v *rules.Verdict) value { return str(r.decidingRuleAt(v, false)) },
	rules.CellDecidingRuleSite: func(r *Report, v *rules.Verdict) value { return str(r.decidingRuleAt(v, true)) },
	rules.CellNote:             noteCell,
	rules.CellRefused:          refusedCell,
	rules.CellOutcome:          outcomeCell,
	rules.CellSharedWith:       sharedWithCell,
	rules.CellSharedTools:      sharedToolsCell,
	rules.CellUnreachable:      func(_ *Report, v *rules.Verdict) value { return value{kind: flagValue, b: v.Unreachable} },
}

func decisionCell(_ *Report, v *rules.Verdict) value { return str(v.Decision) }

func decidingRuleCell(r *Report, v *rules.Verdict) value { return str(r.ruleText(*v)) }

func ruleOrNoteCell(r *Report, v *rules.Verdict) value { return str(r.ruleOrNote(*v)) }

func outcomeCell(r *Report, v *rules.Verdict) value { return str(r.Audit.Words.OfOutcome(v.Outcome)) }

func noteCell(_ *Report, v *rules.Verdict) value { return str(v.Note) }

func sharedCell(_ *Report, v *rules.Verdict) value { return str(sharedText(*v)) }

// decidingRuleAt is "file:line:col" of v's deciding rule, with site its "key[index]" (the key
// alone when the index is negative) after a space; "" when no rule decided.
func (r *Report) decidingRuleAt(v *rules.Verdict, site bool) string {
	if v.Rule < 0 || v.Rule >= len(r.Result.Rules) {
		return ""
	}
	ru := r.Result.Rules[v.Rule]
	at := fmt.Sprintf("%s:%d:%d", ru.File, ru.Line, ru.Column)
	switch {
	case !site:
		return at
	case ru.Index < 0:
		return at + " " + ru.Key
	}
	return fmt.Sprintf("%s %s[%d]", at, ru.Key, ru.Index)
}

func refusedCell(r *Report, v *rules.Verdict) value {
	var l []string
	for _, i := range v.Refused {
		if i >= 0 && i < len(r.Result.Rules) {
			l = append(l, r.Result.Rules[i].Text)
		}
	}
	return value{kind: listValue, list: l}
}

func sharedWithCell(_ *Report, v *rules.Verdict) value {
	var l []string
	for _, o := range v.SharedWith {
		l = append(l, o.String())
	}
	return value{kind: listValue, list: l}
}

func sharedToolsCell(_ *Report, v *rules.Verdict) value {
	if len(v.SharedWith) == 0 {
		return value{kind: rawValue}
	}
	type tool struct {
		Server string `json:"server"`
		Tool   string `json:"tool"`
	}
	l := make([]tool, len(v.SharedWith))
	for i, o := range v.SharedWith {
		l[i] = tool{o.Server, o.Tool}
	}
	return value{kind: rawValue, raw: encode(l)}
}

// countCells are the count cells (rules.CellCountRules … CellCountFindings), asked anywhere.
var countCells = map[rules.Cell]func(r *Report) int{
	rules.CellCountRules:            func(r *Report) int { return r.Result.Counts.Rules },
	rules.CellCountTools:            func(r *Report) int { return r.Result.Counts.Tools },
	rules.CellCountPairs:            func(r *Report) int { return r.Result.Counts.Pairs },
	rules.CellCountListed:           func(r *Report) int { return len(r.Result.Visible(r.allPairs)) },
	rules.CellCountLost:             func(r *Report) int { return r.Result.Counts.Lost },
	rules.CellCountLostRestrictions: func(r *Report) int { return r.Result.Counts.LostRestrictions },
	rules.CellCountGained:           func(r *Report) int { return r.Result.Counts.Gained },
	rules.CellCountRefused:          func(r *Report) int { return r.Result.Counts.NotApplied },
	rules.CellCountChanged:          func(r *Report) int { return r.Result.Counts.Changed },
	rules.CellCountFindings:         func(r *Report) int { return len(r.Result.Findings) },
}

// ruleOrNote is the deciding rule's text, else the note in parentheses, else "".
func (r *Report) ruleOrNote(v rules.Verdict) string {
	if t := r.ruleText(v); t != "" || (v.Rule >= 0 && v.Rule < len(r.Result.Rules)) {
		return t
	}
	if v.Note != "" {
		return "(" + v.Note + ")"
	}
	return ""
}

// fields is the JSON object of fs at x.
func (r *Report) fields(fs []rules.Field, x cellAt) json.RawMessage {
	var o object
	for _, f := range fs {
		v := r.cell(f.Cell, f.Key, x)
		if f.Omit && v.empty() {
			continue
		}
		o = append(o, member{f.Key, v.json()})
	}
	b, _ := o.MarshalJSON()
	return b
}

// row is the cells of fs at x, for a table.
func (r *Report) row(fs []rules.Field, x cellAt) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = r.cell(f.Cell, f.Key, x).text()
	}
	return out
}

func headers(fs []rules.Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Key
	}
	return out
}

// pairAt is where the cells of pair p are computed.
func (r *Report) pairAt(p *rules.Pair) cellAt {
	return cellAt{rule: &r.Result.Rules[p.Rule], tool: &r.Result.Tools[p.Tool], pair: p}
}

func list(items []json.RawMessage) json.RawMessage {
	if len(items) == 0 {
		return json.RawMessage("[]")
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// layoutDocument is the JSON document of a layout (rules.Layout.Document); redispatch is the
// history check's findings as JSON (nil: []).
func (r *Report) layoutDocument(redispatch json.RawMessage) object {
	a, res, l := r.Audit, r.Result, r.Audit.Layout
	pairs := func(ps []rules.Pair) json.RawMessage {
		var items []json.RawMessage
		for i := range ps {
			items = append(items, r.fields(l.Pair, r.pairAt(&ps[i])))
		}
		return list(items)
	}
	ruleList := func(rs []rules.Rule, omit bool) (json.RawMessage, bool) {
		var items []json.RawMessage
		for i := range rs {
			items = append(items, r.fields(l.Rule, cellAt{rule: &rs[i]}))
		}
		return list(items), omit && len(items) == 0
	}
	var o object
	for _, f := range l.Document {
		var v json.RawMessage
		skip := false
		switch f.Cell {
		case rules.CellGenerated:
			v = encode(r.generated.UTC().Format(time.RFC3339))
		case rules.CellAgent:
			v = encode(a.ID)
		case rules.CellNow:
			v = encode(res.Now)
		case rules.CellBefore:
			v = encode(res.Before)
		case rules.CellFact:
			fv := str("")
			for _, fa := range a.Facts {
				if fa.Key == f.Key {
					fv = r.factValue(fa)
				}
			}
			v, skip = fv.json(), f.Omit && fv.empty()
		case rules.CellInventory:
			v = encode(a.Inventory)
		case rules.CellCounts:
			v = r.fields(l.Count, cellAt{})
		case rules.CellFiles:
			files := []reports.JSONFile{}
			for _, fi := range a.Files {
				files = append(files, reports.JSONFile{Path: fi.Path, Scope: fi.Scope})
			}
			v = encode(files)
		case rules.CellRules:
			v, skip = ruleList(res.Rules, f.Omit)
		case rules.CellShadowed:
			v, skip = ruleList(a.Shadowed, f.Omit)
		case rules.CellTools:
			var items []json.RawMessage
			for i := range res.Tools {
				items = append(items, r.fields(l.Tool, cellAt{tool: &res.Tools[i]}))
			}
			v = list(items)
		case rules.CellPairs:
			v = pairs(res.Visible(r.allPairs))
		case rules.CellLostRestrictions:
			v = pairs(res.LostRestrictions())
		case rules.CellFindings:
			v = encode(r.Document(nil).Findings)
		case rules.CellNotes:
			v, skip = encode(a.Notes), f.Omit && len(a.Notes) == 0
		case rules.CellErrors:
			v = encode(append([]string{}, a.Problems...))
		case rules.CellRedispatch:
			v = redispatch
			if v == nil {
				v = json.RawMessage("[]")
			}
		default:
			cv := r.cell(f.Cell, f.Key, cellAt{})
			v, skip = cv.json(), f.Omit && cv.empty()
		}
		if !skip {
			o = append(o, member{f.Key, v})
		}
	}
	return o
}

// countLabels are the page's counts per count cell (Layout.Page.Counts).
var countLabels = map[rules.Cell]reports.HTMLCount{
	rules.CellCountLostRestrictions: {Label: "lost restrictions", One: "lost restriction", Tone: "bad", Href: "#lost"},
	rules.CellCountRules:            {Label: "rules", One: "rule", Href: "#pairs"},
	rules.CellCountTools:            {Label: "tools", One: "tool", Href: "#tools"},
	rules.CellCountLost:             {Label: "lost", Tone: "bad", Href: "#pairs.change=lost"},
	rules.CellCountGained:           {Label: "gained", Tone: "good", Href: "#pairs.change=gained"},
	rules.CellCountRefused:          {Label: "refused", Tone: "warn", Href: "#pairs.now=refused"},
	rules.CellCountFindings:         {Label: "findings", One: "finding", Tone: "warn", Href: "#findings"},
	rules.CellCountChanged:          {Label: "changed outcomes", One: "changed outcome", Href: "#tools"},
}

// defaultCounts are the page's counts of the default layout.
var defaultCounts = []rules.Cell{rules.CellCountLostRestrictions, rules.CellCountRules, rules.CellCountTools,
	rules.CellCountLost, rules.CellCountGained, rules.CellCountFindings}
