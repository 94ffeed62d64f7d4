// Package kilo is Kilo Code CLI's permission rule semantics for MCP tools, as pure functions
// over values: no I/O, no config-file discovery, no clock. Kilo CLI 7.x is an opencode fork and
// keeps opencode's "permission" config (fixtures/kilo-real/README.md "Rule behaviour observed",
// rules.tsv: measured with 7.0.33 and 7.7.7; docs/kilo.md):
//
//	"permission": {"*": "allow", "lit_get_data": "allow", "foo_bar_deploy_prod": "deny"}
//
// Each key is a wildcard pattern over the model-facing tool name (mcpname.KiloName:
// sanitize(server) + "_" + sanitize(tool)); a string value is the action for every argument
// ("*"), an object value maps argument patterns to actions. Rules are kept in the order
// JavaScript gives the object's keys (FromConfig); the LAST rule that matches decides
// (Evaluate); nothing matching means "ask". A tool whose deciding rule is a deny for every
// argument is not offered at all (Disabled). Rules key on the model-facing name, so one rule
// spelled for one server covers the tool of every server that sanitizes alike: the deny
// "foo_bar_deploy_prod" hid deploy.prod of both foo.bar and foo_bar (Covers).
//
// The API:
//
//	FromConfig(permission []byte) ([]Rule, error)      the config member's value, as rules
//	Match(s, pattern string) bool                       opencode's Wildcard.match
//	Evaluate(name string, rulesets ...[]Rule) (Action, *Rule)
//	Disabled(name string, rulesets ...[]Rule) bool
//	Outcomes(tools []Tool, rulesets ...[]Rule) []Outcome   per raw tool: name, shadowing, offered, action
//	Covers(rules []Rule, tools []Tool) []Cover          rules that reach tools of several servers
//
// BuildDefaults is the default agent's own ruleset, which comes first.
package kilo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/sessionfix/sessionfix/mcpname"
)

// Action is what a rule does with a call.
type Action string

// Actions of a rule (opencode's PermissionNext.Action).
const (
	Allow Action = "allow"
	Ask   Action = "ask"
	Deny  Action = "deny"
)

// Rule is one permission rule: Permission is the pattern over the tool name (the config key),
// Pattern the pattern over the call's argument ("*" for a string value), Action what it does.
type Rule struct {
	Permission string `json:"permission"`
	Pattern    string `json:"pattern"`
	Action     Action `json:"action"`
}

// BuildDefaults is the ruleset of the default agent before any config: every tool allowed
// ("*": "allow"; opencode's build agent defaults, which Kilo's default agent keeps). It only
// decides a tool no config rule matches: with it, an MCP tool without a rule runs unasked.
var BuildDefaults = []Rule{{Permission: "*", Pattern: "*", Action: Allow}}

// ErrBadPermission means the "permission" value is not a string or an object of actions.
var ErrBadPermission = errors.New("invalid permission config")

// FromConfig reads the value of the config's "permission" member (standard JSON: strip
// comments first) as rules, in opencode's PermissionNext.fromConfig order: a string value is
// one rule {"*", "*", value}; an object's keys, in JavaScript's own-key order (canonical
// array-index keys such as "10" first, ascending, then the others as written; a repeated key
// keeps its first place and its last value, as JSON.parse does), each give {key, "*", value}
// for a string value or {key, argument pattern, action} per member of an object value. An
// action other than allow, ask or deny, or any other shape, is ErrBadPermission.
func FromConfig(permission []byte) ([]Rule, error) {
	dec := json.NewDecoder(bytes.NewReader(permission))
	dec.UseNumber()
	var v any
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPermission, err)
	}
	if s, ok := tok.(string); ok {
		a, err := action(s)
		if err != nil {
			return nil, err
		}
		return []Rule{{Permission: "*", Pattern: "*", Action: a}}, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("%w: a string or an object, not %v", ErrBadPermission, tok)
	}
	keys, vals, err := members(dec)
	if err != nil {
		return nil, err
	}
	var out []Rule
	for _, k := range jsOrder(keys) {
		raw := vals[k]
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrBadPermission, k, err)
		}
		switch x := v.(type) {
		case string:
			a, err := action(x)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", k, err)
			}
			out = append(out, Rule{Permission: k, Pattern: "*", Action: a})
		case map[string]any:
			inner := json.NewDecoder(bytes.NewReader(raw))
			if _, err := inner.Token(); err != nil {
				return nil, fmt.Errorf("%w: %q: %v", ErrBadPermission, k, err)
			}
			pkeys, pvals, err := members(inner)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", k, err)
			}
			for _, p := range jsOrder(pkeys) {
				var s string
				if err := json.Unmarshal(pvals[p], &s); err != nil {
					return nil, fmt.Errorf("%w: %q.%q: an action string", ErrBadPermission, k, p)
				}
				a, err := action(s)
				if err != nil {
					return nil, fmt.Errorf("%q.%q: %w", k, p, err)
				}
				out = append(out, Rule{Permission: k, Pattern: p, Action: a})
			}
		default:
			return nil, fmt.Errorf("%w: %q: an action or an object of actions", ErrBadPermission, k)
		}
	}
	return out, nil
}

// members reads an object's members after its '{' (keys in first-seen order, last value).
func members(dec *json.Decoder) ([]string, map[string]json.RawMessage, error) {
	var keys []string
	vals := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrBadPermission, err)
		}
		k := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("%w: %q: %v", ErrBadPermission, k, err)
		}
		if _, seen := vals[k]; !seen {
			keys = append(keys, k)
		}
		vals[k] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrBadPermission, err)
	}
	return keys, vals, nil
}

// jsOrder is JavaScript's own-key order of an object's keys (first-seen order given): the
// canonical array indexes ("0" … "4294967294", no leading zero) ascending, then the rest.
func jsOrder(keys []string) []string {
	var idx, rest []string
	for _, k := range keys {
		if n, err := strconv.ParseUint(k, 10, 32); err == nil && n < 1<<32-1 && strconv.FormatUint(n, 10) == k {
			idx = append(idx, k)
		} else {
			rest = append(rest, k)
		}
	}
	slices.SortStableFunc(idx, func(a, b string) int {
		x, _ := strconv.ParseUint(a, 10, 32)
		y, _ := strconv.ParseUint(b, 10, 32)
		return int(int64(x) - int64(y))
	})
	return append(idx, rest...)
}

func action(s string) (Action, error) {
	switch a := Action(s); a {
	case Allow, Ask, Deny:
		return a, nil
	}
	return "", fmt.Errorf("%w: action %q (allow, ask or deny)", ErrBadPermission, s)
}

// Match is opencode's Wildcard.match(s, pattern): the whole of s matches pattern, where "*"
// matches any run of characters (none included), "?" exactly one UTF-16 unit, and every other
// character itself; a pattern ending in " *" also matches without that tail ("ls *" matches
// "ls"). Case-sensitive (opencode folds case on Windows only).
func Match(s, pattern string) bool {
	su, pu := mcpname.Units(s), mcpname.Units(pattern)
	if n := len(pu); n >= 2 && pu[n-2] == ' ' && pu[n-1] == '*' && glob(su, pu[:n-2]) {
		return true
	}
	return glob(su, pu)
}

// glob matches s against p ('*' any run, '?' one unit), iteratively with one backtrack point.
func glob(s, p []uint16) bool {
	si, pi, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			si++
			pi++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// Evaluate is opencode's PermissionNext.evaluate(name, "*", rulesets…) for a call of the tool
// named name (MCP tools ask with the argument pattern "*"): the last rule, over the rulesets
// in order, whose Permission matches name and whose Pattern matches "*"; nil and Ask when none
// does.
func Evaluate(name string, rulesets ...[]Rule) (Action, *Rule) {
	for i := len(rulesets) - 1; i >= 0; i-- {
		rs := rulesets[i]
		for j := len(rs) - 1; j >= 0; j-- {
			if Match(name, rs[j].Permission) && Match("*", rs[j].Pattern) {
				return rs[j].Action, &rs[j]
			}
		}
	}
	return Ask, nil
}

// Disabled is opencode's PermissionNext.disabled for one tool: the last rule whose Permission
// matches name (any argument pattern) denies every argument ("*"): the tool is not offered.
func Disabled(name string, rulesets ...[]Rule) bool {
	for i := len(rulesets) - 1; i >= 0; i-- {
		rs := rulesets[i]
		for j := len(rs) - 1; j >= 0; j-- {
			if Match(name, rs[j].Permission) {
				return rs[j].Pattern == "*" && rs[j].Action == Deny
			}
		}
	}
	return false
}

// StrictMax is the longest tool name strict providers accept (^[a-zA-Z0-9_-]{1,64}$), in
// UTF-16 units.
const StrictMax = 64

// Tool is one raw MCP tool: a configured server key and the tool name it lists.
type Tool struct{ Server, Tool string }

// Outcome is what Kilo does with one raw tool under a ruleset.
type Outcome struct {
	Tool Tool
	// Name is the model-facing name (mcpname.KiloName).
	Name string
	// Answers is the raw tool a call of Name reaches: the last tool registered under Name
	// (configuration order; the later registration wins). Shadowed: Answers is another tool,
	// so this one can never be called.
	Answers  Tool
	Shadowed bool
	// Offered: Name is in the tool list (not Disabled).
	Offered bool
	// Action is what a call of Name gets (Evaluate) and Rule the rule that decides it (nil:
	// none matched: Ask).
	Action Action
	Rule   *Rule
	// OverLong: Name is longer than 64 UTF-16 units (Kilo has no cap): strict providers reject
	// the tool list while the tool is offered, and any stored call of it.
	OverLong bool
}

// Outcomes gives the outcome of every raw tool, in the order given (the configuration's: servers
// in config order, each server's tools in its list order), under the rulesets (BuildDefaults
// first, then the config's, as Kilo merges them).
func Outcomes(tools []Tool, rulesets ...[]Rule) []Outcome {
	last := map[string]Tool{}
	for _, t := range tools {
		last[mcpname.KiloName(t.Server, t.Tool)] = t
	}
	out := make([]Outcome, len(tools))
	for i, t := range tools {
		n := mcpname.KiloName(t.Server, t.Tool)
		a, r := Evaluate(n, rulesets...)
		out[i] = Outcome{Tool: t, Name: n, Answers: last[n], Shadowed: last[n] != t,
			Offered: !Disabled(n, rulesets...), Action: a, Rule: r, OverLong: mcpname.Len(n) > StrictMax}
	}
	return out
}

// Cover is one rule that reaches the tools of several servers.
type Cover struct {
	// Rule is the rule and Index its place in the rules given to Covers.
	Rule  Rule
	Index int
	// Names are the model-facing names it matches, Tools the raw tools behind them, Servers
	// their server keys (each list sorted, no repeats).
	Names   []string
	Tools   []Tool
	Servers []string
}

// Covers lists the rules (in order) that a user spelling a rule for one server's tool would
// not expect to reach another server: a rule whose pattern matches tools of two servers whose
// keys sanitize alike ("foo.bar" and "foo_bar": "foo_bar_deploy_prod" names the tool of both),
// or a rule without wildcards that matches two raw tools (their names merged). A rule that
// matches every name of a server set on purpose ("*") is no finding.
func Covers(rules []Rule, tools []Tool) []Cover {
	var out []Cover
	for i, r := range rules {
		if r.Permission == "*" {
			continue
		}
		c := Cover{Rule: r, Index: i}
		byKey := map[string][]string{} // sanitized key → raw keys
		for _, t := range tools {
			n := mcpname.KiloName(t.Server, t.Tool)
			if !Match(n, r.Permission) {
				continue
			}
			if !slices.Contains(c.Names, n) {
				c.Names = append(c.Names, n)
			}
			c.Tools = append(c.Tools, t)
			if !slices.Contains(c.Servers, t.Server) {
				c.Servers = append(c.Servers, t.Server)
			}
			k := mcpname.KiloSanitize(t.Server)
			if !slices.Contains(byKey[k], t.Server) {
				byKey[k] = append(byKey[k], t.Server)
			}
		}
		alike := false
		for _, raws := range byKey {
			alike = alike || len(raws) > 1
		}
		exact := !bytes.ContainsAny([]byte(r.Permission), "*?") && len(c.Tools) > 1
		if !alike && !exact {
			continue
		}
		slices.Sort(c.Names)
		slices.Sort(c.Servers)
		slices.SortFunc(c.Tools, func(a, b Tool) int {
			if a.Server != b.Server {
				return cmpString(a.Server, b.Server)
			}
			return cmpString(a.Tool, b.Tool)
		})
		out = append(out, c)
	}
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
