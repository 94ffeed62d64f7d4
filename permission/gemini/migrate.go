package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
)

// Migration is the input of PlanMigration: the release the rules were written for (From: what
// they meant) and the one that runs them now (To), the mode they run in, the rule files and the
// raw tools (as for Evaluate).
type Migration struct {
	From, To    Release
	Mode        Mode
	Interactive bool
	Settings    []*SettingsFile
	Policies    []*PolicyFile
	Tools       []Tool
}

// Edit replaces the bytes [Start, End) of a file with New (Start == End: an insertion).
type Edit struct {
	Start int    `json:"start"`
	End   int    `json:"end"`
	New   string `json:"new"`
}

// Rewrite is one rule's migration: its edits (byte-exact: only the rule's value changes, or a
// mcpName line is added; comments and layout stay), what the rule meant (Intended: the tools it
// matched under From, or when it matched none there, the tools its spelling names), what it
// matches under To as written (Now) and rewritten (After). Held: the rewrite is not made (Why
// says why: it would match a tool the rule did not mean, or no spelling of To addresses the
// tools).
type Rewrite struct {
	Rule     *RuleRef `json:"rule"`
	File     string   `json:"file"`
	Old      string   `json:"old"`
	New      string   `json:"new,omitempty"`
	Edits    []Edit   `json:"edits,omitempty"`
	Intended []Tool   `json:"intended"`
	Now      []Tool   `json:"now"`
	After    []Tool   `json:"after"`
	Held     bool     `json:"held"`
	Why      string   `json:"why"`
}

// PlanMigration plans, for every tools.exclude, tools.allowed, tools.core entry and policy rule
// whose tools under m.To differ from what it meant (Rewrite.Intended), the spelling of m.To that
// matches the same raw tools: for a policy rule mcpName = "<server>" + the sanitized tool part
// (toolName = "*" for every tool of a server), else, and for settings entries, the name m.To
// declares (mcp_<server>_<tool>). A rewrite is checked by evaluating the rewritten file under
// m.To: one that would match a tool the rule did not mean is held back (never widen), as is a
// rule no spelling can address (a server key that m.To's names change, a wildcard over such a
// server, a v1 excludeTools m.To no longer reads: it must move to tools.exclude), or a rule of a
// file m.To rejects. Rules that mean the same under m.To are left out. Rewrites come in input
// order; each one's edits are against the file as read.
func PlanMigration(m Migration) []*Rewrite {
	cfg := func(r Release) Config {
		return Config{Release: r, Mode: m.Mode, Interactive: m.Interactive, Settings: m.Settings, Policies: m.Policies, Tools: m.Tools}
	}
	before, now := Evaluate(cfg(m.From)), Evaluate(cfg(m.To))
	var out []*Rewrite
	for _, rr := range now.Rules {
		ref := rr.Ref
		switch ref.Kind {
		case KindExclude, KindLegacyExclude, KindAllowed, KindCore, KindPolicy:
		default:
			continue
		}
		b := before.Rule(ref.ID)
		intended := toolSet(b.Matches)
		if b.Ignored != "" {
			intended = nil
		}
		if len(intended) == 0 {
			intended = named(ref, m.Tools)
		}
		cur := toolSet(rr.Matches)
		if rr.Ignored != "" {
			cur = nil
		}
		if len(intended) == 0 || (sameTools(intended, cur) && rr.Ignored == "") {
			continue
		}
		rw := &Rewrite{Rule: ref, File: ref.Pos.File, Old: ref.Text, Intended: intended, Now: cur}
		out = append(out, rw)
		switch {
		case ref.Kind == KindLegacyExclude:
			rw.Held, rw.Why = true, fmt.Sprintf("Gemini CLI %s no longer reads the top-level excludeTools (settings format v1): move %q into tools.exclude (as %s)", m.To, ref.Entry.Value, strings.Join(declaredNames(intended), ", "))
			continue
		case ref.Kind == KindPolicy && ref.File.Check(m.To).Rejected:
			rw.Held, rw.Why = true, "Gemini CLI "+m.To.Text+" rejects the whole file: "+ref.File.Check(m.To).Reason+"; fix the file first"
			continue
		case ref.Kind == KindPolicy && (ref.File.NoPositions || ref.Policy.insertAt < 0 && ref.Policy.MCPName == nil):
			rw.Held, rw.Why = true, "the layout of the file could not be followed to its bytes; rewrite it by hand"
			continue
		case rr.Ignored != "" && ref.Kind != KindPolicy:
			rw.Held, rw.Why = true, "Gemini CLI "+m.To.Text+" does not apply it: "+rr.Ignored
			continue
		}
		var newText string
		var edits []Edit
		var why string
		if ref.Kind == KindPolicy {
			newText, edits, why = policyRewrite(ref, intended)
		} else {
			newText, edits, why = settingsRewrite(ref, intended)
		}
		if edits == nil {
			rw.Held, rw.Why = true, why
			continue
		}
		after, err := matchesAfter(m, ref, edits, len(declaredNames(intended)))
		if err != nil {
			rw.Held, rw.Why = true, "the rewritten file does not read back: "+err.Error()
			continue
		}
		rw.After = after
		if extra := minus(after, intended); len(extra) > 0 {
			rw.Held = true
			rw.Why = fmt.Sprintf("%s would also match %s, which %s did not mean: held back (never widen)", newText, toolList(extra), ref.Text)
			continue
		}
		rw.New, rw.Edits = newText, edits
		rw.Why = fmt.Sprintf("under Gemini CLI %s, %s matches %s; %s matches %s as it did under %s", m.To, ref.Text, orNothing(cur), newText, toolList(after), m.From)
		if missing := minus(intended, after); len(missing) > 0 {
			rw.Why += fmt.Sprintf("; %s still unmatched", toolList(missing))
		}
	}
	return out
}

// named are the tools the spelling of a rule names in any era, whatever a release matches:
// "<server>__<tool>" (raw or sanitized tool), "<server>__*", a bare name, an mcp_ name, and
// mcpName + a raw or sanitized toolName.
func named(ref *RuleRef, tools []Tool) []Tool {
	var specs [][2]string // (mcpName or "", toolName)
	if ref.Kind == KindPolicy {
		mcp := ""
		if ref.Policy.MCPName != nil {
			mcp = ref.Policy.MCPName.Value
		}
		for _, t := range ref.Policy.ToolNames {
			specs = append(specs, [2]string{mcp, t.Value})
		}
		if len(ref.Policy.ToolNames) == 0 && mcp != "" {
			specs = append(specs, [2]string{mcp, "*"})
		}
	} else if ref.Entry != nil {
		name := ref.Entry.Value
		if open := strings.IndexByte(name, '('); open > 0 && strings.HasSuffix(name, ")") {
			name = name[:open]
		}
		specs = append(specs, [2]string{"", name})
	}
	var out []Tool
	for _, t := range tools {
		for _, s := range specs {
			if namesTool(s[0], s[1], t) {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

func namesTool(mcp, name string, t Tool) bool {
	v1 := mcpname.GeminiValidNameV1(t.Name)
	if mcp != "" {
		return mcp == t.Server && (name == "*" || name == t.Name || name == v1 || mcpname.GeminiName(t.Server, name) == mcpname.GeminiName(t.Server, t.Name))
	}
	switch name {
	case t.Server + "__*", t.Server + "__" + t.Name, t.Server + "__" + v1, mcpname.GeminiName(t.Server, t.Name):
		return true
	}
	return false
}

// policyRewrite is the rewrite of a policy rule to the tools intended (see PlanMigration).
func policyRewrite(ref *RuleRef, intended []Tool) (text string, edits []Edit, why string) {
	r, f := ref.Policy, ref.File
	servers := map[string]bool{}
	for _, t := range intended {
		servers[t.Server] = true
	}
	all := len(r.ToolNames) == 1 && (strings.HasSuffix(r.ToolNames[0].Value, "__*") || r.ToolNames[0].Value == "*") || len(r.ToolNames) == 0
	nl := "\n"
	if bytes.Contains(f.Data, []byte("\r\n")) {
		nl = "\r\n"
	}
	if len(servers) == 1 {
		var s string
		for k := range servers {
			s = k
		}
		prefix := "mcp_" + s + "_"
		var parts []string
		ok := true
		for _, t := range intended {
			n := mcpname.GeminiName(t.Server, t.Name)
			if !strings.HasPrefix(n, prefix) || strings.Contains(n, "...") {
				ok = false
				break
			}
			parts = append(parts, n[len(prefix):])
		}
		if ok && (r.MCPName == nil || r.MCPName.Value == s) {
			values := parts
			if all {
				values = []string{"*"}
			}
			var per []string
			if !all {
				per = perEntry(r, intended, func(t Tool) string { return mcpname.GeminiName(t.Server, t.Name)[len(prefix):] })
			}
			e, text, why := toolNameEdits(r, values, per, f.Data)
			if why != "" {
				return "", nil, why
			}
			if e != nil {
				edits = e
				if r.MCPName == nil {
					ins := Edit{Start: r.insertAt, End: r.insertAt, New: r.indent + "mcpName = " + tomlString(s) + nl}
					if r.inline {
						ins = Edit{Start: r.keyStart, End: r.keyStart, New: "mcpName = " + tomlString(s) + ", "}
					}
					edits = append([]Edit{ins}, edits...)
				}
				return fmt.Sprintf("mcpName = %q, %s", s, text), edits, ""
			}
		}
	}
	if all {
		return "", nil, fmt.Sprintf("no rule of Gemini CLI from 0.33.0 addresses every tool of %s by its server: its key changes in the tools' names (mcp_<server>_* and mcpName need the key as it is); name the tools one by one", serverList(servers))
	}
	var values []string
	for _, t := range intended {
		values = append(values, mcpname.GeminiName(t.Server, t.Name))
	}
	if r.MCPName != nil {
		return "", nil, fmt.Sprintf("the rule's mcpName %q cannot name %s: its key changes in the tools' names", r.MCPName.Value, toolList(intended))
	}
	e, text, why := toolNameEdits(r, values, perEntry(r, intended, func(t Tool) string { return mcpname.GeminiName(t.Server, t.Name) }), f.Data)
	if why != "" {
		return "", nil, why
	}
	return text, e, ""
}

// perEntry is the new value of each of r's toolName strings, in order, when each one names
// exactly one of the intended tools (and together they name them all): value(tool). nil when
// the strings do not map one to one onto tools (a wildcard, a bare name of several servers).
func perEntry(r *PolicyRule, intended []Tool, value func(Tool) string) []string {
	mcp := ""
	if r.MCPName != nil {
		mcp = r.MCPName.Value
	}
	var out []string
	covered := map[Tool]bool{}
	for _, e := range r.ToolNames {
		var hit []Tool
		for _, t := range intended {
			if namesTool(mcp, e.Value, t) {
				hit = append(hit, t)
			}
		}
		if len(hit) != 1 {
			return nil
		}
		covered[hit[0]] = true
		out = append(out, value(hit[0]))
	}
	if len(covered) != len(intended) {
		return nil
	}
	return out
}

// hasComment reports whether the TOML bytes b hold a comment (a # outside strings).
func hasComment(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '#':
			return true
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < len(b) && b[i] != '\''; i++ {
			}
		}
	}
	return false
}

// toolNameEdits replaces the rule's toolName value(s) with values: one string for one value
// (or a list of one), a list otherwise. In a list whose strings each name one tool (per: the
// new value of each string, in order) each string is replaced in place, so the separators,
// line breaks and comments between them stay; otherwise the strings first..last become the new
// ones, and a list with a comment between its strings is not rewritten (why says so: the
// comment would be lost). why "" with edits nil: the toolName is not located in data.
func toolNameEdits(r *PolicyRule, values, per []string, data []byte) (edits []Edit, text, why string) {
	if len(r.ToolNames) == 0 {
		return nil, "", "the rule's toolName could not be located in the file"
	}
	for _, t := range r.ToolNames {
		if t.Start < 0 {
			return nil, "", "the rule's toolName could not be located in the file"
		}
	}
	var q []string
	for _, v := range values {
		q = append(q, tomlString(v))
	}
	first, last := r.ToolNames[0], r.ToolNames[len(r.ToolNames)-1]
	text = "toolName = " + strings.Join(q, ", ")
	if len(values) > 1 || r.ToolNameList {
		text = "toolName = [" + strings.Join(q, ", ") + "]"
	}
	switch {
	case !r.ToolNameList && len(values) == 1:
		return []Edit{{Start: first.Start, End: first.End, New: q[0]}}, text, ""
	case !r.ToolNameList:
		return []Edit{{Start: first.Start, End: first.End, New: "[" + strings.Join(q, ", ") + "]"}}, text, ""
	case len(per) == len(r.ToolNames):
		var pq []string
		for i, e := range r.ToolNames {
			edits = append(edits, Edit{Start: e.Start, End: e.End, New: tomlString(per[i])})
			pq = append(pq, tomlString(per[i]))
		}
		return edits, "toolName = [" + strings.Join(pq, ", ") + "]", ""
	case last.End <= len(data) && hasComment(data[first.Start:last.End]):
		return nil, "", "its toolName list has a comment between its strings, which the rewrite of the list would lose: rewrite it by hand to " + text
	}
	// A list: its strings become the new ones (the brackets, separators and comments outside
	// the first..last strings stay).
	return []Edit{{Start: first.Start, End: last.End, New: strings.Join(q, ", ")}}, text, ""
}

// settingsRewrite is the rewrite of a settings list entry: the names the release declares for
// the intended tools.
func settingsRewrite(ref *RuleRef, intended []Tool) (text string, edits []Edit, why string) {
	names := declaredNames(intended)
	var q []string
	for _, n := range names {
		q = append(q, jsonString(n))
	}
	return fmt.Sprintf("%s: %s", ref.Entry.Key, strings.Join(q, ", ")), []Edit{{Start: ref.Entry.Start, End: ref.Entry.End, New: strings.Join(q, ", ")}}, ""
}

func declaredNames(ts []Tool) []string {
	var out []string
	for _, t := range ts {
		if n := mcpname.GeminiName(t.Server, t.Name); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// matchesAfter evaluates the file of ref rewritten by edits under m.To and returns the tools the
// rewritten rule matches (for a settings entry: the entries entries that replace it).
func matchesAfter(m Migration, ref *RuleRef, edits []Edit, entries int) ([]Tool, error) {
	c := Config{Release: m.To, Mode: m.Mode, Interactive: m.Interactive, Tools: m.Tools}
	var id []string
	if ref.Kind == KindPolicy {
		data, err := ApplyEdits(ref.File.Data, edits)
		if err != nil {
			return nil, err
		}
		nf := ParsePolicy(ref.File.Path, data, ref.File.Scope)
		if nf.SyntaxError != nil {
			return nil, nf.SyntaxError
		}
		c.Settings = m.Settings
		for _, p := range m.Policies {
			if p == ref.File {
				p = nf
			}
			c.Policies = append(c.Policies, p)
		}
		id = []string{ref.ID}
	} else {
		var sf *SettingsFile
		for _, s := range m.Settings {
			if s.Path == ref.Pos.File {
				sf = s
			}
		}
		if sf == nil {
			return nil, fmt.Errorf("%s: not one of the settings files", ref.Pos.File)
		}
		data, err := ApplyEdits(sf.Data, edits)
		if err != nil {
			return nil, err
		}
		nf, err := ParseSettings(sf.Path, data, sf.Scope)
		if err != nil {
			return nil, err
		}
		for _, s := range m.Settings {
			if s == sf {
				s = nf
			}
			c.Settings = append(c.Settings, s)
		}
		c.Policies = m.Policies
		for i := 0; i < entries; i++ {
			id = append(id, fmt.Sprintf("%s#%s[%d]", sf.Path, ref.Entry.Key, ref.Entry.Index+i))
		}
	}
	res := Evaluate(c)
	var out []Tool
	for _, x := range id {
		if rr := res.Rule(x); rr != nil && rr.Ignored == "" {
			out = append(out, rr.Matches...)
		}
	}
	return toolSet(out), nil
}

// ApplyEdits returns data with edits made (in any order; they must not overlap and must lie
// inside data).
func ApplyEdits(data []byte, edits []Edit) ([]byte, error) {
	es := slices.Clone(edits)
	sort.SliceStable(es, func(i, j int) bool { return es[i].Start < es[j].Start })
	var out bytes.Buffer
	at := 0
	for _, e := range es {
		if e.Start < at || e.End < e.Start || e.End > len(data) {
			return nil, fmt.Errorf("edit [%d,%d) overlaps another or lies outside the file (%d bytes)", e.Start, e.End, len(data))
		}
		out.Write(data[at:e.Start])
		out.WriteString(e.New)
		at = e.End
	}
	out.Write(data[at:])
	return out.Bytes(), nil
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// jsonString is s as a JSON string (no HTML escaping).
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func toolSet(ts []Tool) []Tool {
	out := slices.Clone(ts)
	slices.SortFunc(out, func(a, b Tool) int {
		if a.Server != b.Server {
			return strings.Compare(a.Server, b.Server)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return slices.Compact(out)
}

func sameTools(a, b []Tool) bool { return slices.Equal(toolSet(a), toolSet(b)) }

func minus(a, b []Tool) []Tool {
	var out []Tool
	for _, t := range a {
		if !slices.Contains(b, t) {
			out = append(out, t)
		}
	}
	return out
}

func toolList(ts []Tool) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return strings.Join(s, ", ")
}

func orNothing(ts []Tool) string {
	if len(ts) == 0 {
		return "no tool"
	}
	return toolList(ts)
}

func serverList(m map[string]bool) string {
	return strings.Join(sortedKeys(m), ", ")
}
