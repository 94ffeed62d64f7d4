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
// apply where it is asked is "".
func (r *Report) cell(c rules.Cell, key string, x cellAt) value {
	w, res := r.Audit.Words, r.Result
	if ru := x.rule; ru != nil {
		switch c {
		case rules.CellFile:
			return str(ru.File)
		case rules.CellScope:
			return str(ru.Scope)
		case rules.CellKey:
			return str(ru.Key)
		case rules.CellIndex:
			return value{kind: intValue, n: ru.Index}
		case rules.CellLine:
			return value{kind: intValue, n: ru.Line}
		case rules.CellColumn:
			return value{kind: intValue, n: ru.Column}
		case rules.CellRule:
			return str(ru.Text)
		case rules.CellKind:
			return str(ru.Kind)
		case rules.CellRuleServer:
			return str(ru.Server)
		case rules.CellEffect:
			return str(effectWord(ru.Effect))
		case rules.CellIgnored:
			return str(ru.Ignored)
		}
	}
	if t := x.tool; t != nil {
		switch c {
		case rules.CellServer:
			return str(t.Server)
		case rules.CellTool:
			return str(t.Tool.Tool)
		case rules.CellSource:
			return str(t.Source)
		case rules.CellNameNow:
			return str(t.Now.Name)
		case rules.CellNameBefore:
			return str(t.Before.Name)
		case rules.CellAttr:
			if f, ok := t.Attr(key); ok {
				return r.factValue(f)
			}
			return str("")
		case rules.CellVerdictNow:
			return value{kind: rawValue, raw: r.fields(r.Audit.Layout.Verdict, cellAt{verdict: &t.Now})}
		case rules.CellVerdictBefore:
			return value{kind: rawValue, raw: r.fields(r.Audit.Layout.Verdict, cellAt{verdict: &t.Before})}
		case rules.CellDecisionNow:
			return str(t.Now.Decision)
		case rules.CellRuleNow:
			return str(r.ruleText(t.Now))
		case rules.CellRuleOrNoteNow:
			return str(r.ruleOrNote(t.Now))
		case rules.CellOutcomeNow:
			return str(w.OfOutcome(t.Now.Outcome))
		case rules.CellNoteNow:
			return str(t.Now.Note)
		case rules.CellSharedNow:
			return str(sharedText(t.Now))
		case rules.CellDecisionBefore:
			return str(t.Before.Decision)
		case rules.CellRuleBefore:
			return str(r.ruleText(t.Before))
		case rules.CellRuleOrNoteBefore:
			return str(r.ruleOrNote(t.Before))
		case rules.CellOutcomeBefore:
			return str(w.OfOutcome(t.Before.Outcome))
		}
	}
	if p := x.pair; p != nil {
		switch c {
		case rules.CellMatchNow:
			return str(w.OfMatch(p.Now))
		case rules.CellMatchBefore:
			return str(w.OfMatch(p.Before))
		case rules.CellChange:
			return str(string(p.Change))
		}
	}
	if v := x.verdict; v != nil {
		switch c {
		case rules.CellName:
			return str(v.Name)
		case rules.CellDecision:
			return str(v.Decision)
		case rules.CellDecidingRule:
			return str(r.ruleText(*v))
		case rules.CellDecidingRuleAt:
			if v.Rule >= 0 && v.Rule < len(res.Rules) {
				ru := res.Rules[v.Rule]
				return str(fmt.Sprintf("%s:%d:%d", ru.File, ru.Line, ru.Column))
			}
			return str("")
		case rules.CellDecidingRuleSite:
			if v.Rule >= 0 && v.Rule < len(res.Rules) {
				ru := res.Rules[v.Rule]
				if ru.Index < 0 {
					return str(fmt.Sprintf("%s:%d:%d %s", ru.File, ru.Line, ru.Column, ru.Key))
				}
				return str(fmt.Sprintf("%s:%d:%d %s[%d]", ru.File, ru.Line, ru.Column, ru.Key, ru.Index))
			}
			return str("")
		case rules.CellNote:
			return str(v.Note)
		case rules.CellRefused:
			var l []string
			for _, i := range v.Refused {
				if i >= 0 && i < len(res.Rules) {
					l = append(l, res.Rules[i].Text)
				}
			}
			return value{kind: listValue, list: l}
		case rules.CellOutcome:
			return str(w.OfOutcome(v.Outcome))
		case rules.CellSharedWith:
			var l []string
			for _, o := range v.SharedWith {
				l = append(l, o.String())
			}
			return value{kind: listValue, list: l}
		case rules.CellSharedTools:
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
		case rules.CellUnreachable:
			return value{kind: flagValue, b: v.Unreachable}
		}
	}
	cn := res.Counts
	switch c {
	case rules.CellCountRules:
		return value{kind: intValue, n: cn.Rules}
	case rules.CellCountTools:
		return value{kind: intValue, n: cn.Tools}
	case rules.CellCountPairs:
		return value{kind: intValue, n: cn.Pairs}
	case rules.CellCountListed:
		return value{kind: intValue, n: len(res.Visible(r.allPairs))}
	case rules.CellCountLost:
		return value{kind: intValue, n: cn.Lost}
	case rules.CellCountLostRestrictions:
		return value{kind: intValue, n: cn.LostRestrictions}
	case rules.CellCountGained:
		return value{kind: intValue, n: cn.Gained}
	case rules.CellCountRefused:
		return value{kind: intValue, n: cn.NotApplied}
	case rules.CellCountChanged:
		return value{kind: intValue, n: cn.Changed}
	case rules.CellCountFindings:
		return value{kind: intValue, n: len(res.Findings)}
	}
	return str("")
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
