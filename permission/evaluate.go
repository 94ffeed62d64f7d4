package permission

// Decision is the result of evaluating the rule lists for one call (Qwen Code
// PermissionDecision).
type Decision string

// Decisions of PermissionManager.evaluate. DecisionDefault means no rule applied: the tool's
// own default permission decides (DefaultPermission).
const (
	DecisionAllow   Decision = "allow"
	DecisionAsk     Decision = "ask"
	DecisionDeny    Decision = "deny"
	DecisionDefault Decision = "default"
)

// Behavior names a rule list: allow, ask or deny (Qwen Code ToolPermissionRuleBehavior).
type Behavior string

// Rule list behaviors. Ask and deny are restrictive: they use MatchesToolPattern against MCP
// tools; allow uses MatchesMcpName and the registry guard.
const (
	BehaviorAllow Behavior = "allow"
	BehaviorAsk   Behavior = "ask"
	BehaviorDeny  Behavior = "deny"
)

// Restrictive reports whether rules of this behavior match restrictively (ask, deny).
func (b Behavior) Restrictive() bool { return b == BehaviorAsk || b == BehaviorDeny }

// Rules holds the parsed rule lists in evaluation order (session rules first, then
// persistent ones, as PermissionManager concatenates them; qwen-reference.md §2.1).
type Rules struct {
	Allow []Rule
	Ask   []Rule
	Deny  []Rule
}

// NewRules parses the three raw lists with ParseRules (blank entries dropped).
func NewRules(allow, ask, deny []string) Rules {
	return Rules{Allow: ParseRules(allow), Ask: ParseRules(ask), Deny: ParseRules(deny)}
}

// Match is how one rule applies to one call.
type Match string

// Match values, as the audit reports them (audit.md §2 "now").
const (
	// NoMatch: the rule does not name the tool.
	NoMatch Match = "no"
	// Matched: the rule names the tool (for allow: and the registry guard accepts it).
	Matched Match = "match"
	// Refused: an allow rule names the tool but IsMcpAllowAmbiguous refuses the grant.
	Refused Match = "refused"
)

// RuleMatch reports how rule, taken from the list of behavior b, applies to ctx with the
// given live registry (nil = no registry, guard off): ask and deny rules match
// restrictively; an allow rule that matches the grant predicate is Refused when the
// registry guard finds it ambiguous (qwen-reference.md §2.1, §2.5).
func RuleMatch(b Behavior, rule Rule, ctx Context, registry []Identity) Match {
	if !MatchesRule(rule, ctx, b.Restrictive()) {
		return NoMatch
	}
	if b == BehaviorAllow && IsMcpAllowAmbiguous(rule.ToolName, ctx.Identity, registry) {
		return Refused
	}
	return Matched
}

// Evaluation is the result of Evaluate.
type Evaluation struct {
	// Decision is deny, ask, allow or default.
	Decision Decision
	// Rule is the rule that decided (the first matching deny, ask or non-refused allow rule);
	// nil when Decision is default. It points into the Rules passed to Evaluate.
	Rule *Rule
	// Refused lists, in order, the allow rules that matched but were refused by the registry
	// guard before the decision was reached (empty when a deny or ask rule decided, since
	// allow rules are then never examined).
	Refused []Rule
}

// Evaluate is Qwen Code's PermissionManager.evaluate for an MCP (non-shell) tool
// (qwen-reference.md §2.1): the first deny rule that matches restrictively gives deny; else
// the first ask rule that matches restrictively gives ask; else the first allow rule that
// matches the grant predicate and is not refused by IsMcpAllowAmbiguous gives allow; else
// default. registry is the live session registry (nil = no registry, guard off).
//
// Qwen Code's hasRelevantRules(ctx) is true exactly when Evaluate returns something other
// than default, so L4 needs no separate call.
func Evaluate(rules Rules, ctx Context, registry []Identity) Evaluation {
	for i := range rules.Deny {
		if MatchesRule(rules.Deny[i], ctx, true) {
			return Evaluation{Decision: DecisionDeny, Rule: &rules.Deny[i]}
		}
	}
	for i := range rules.Ask {
		if MatchesRule(rules.Ask[i], ctx, true) {
			return Evaluation{Decision: DecisionAsk, Rule: &rules.Ask[i]}
		}
	}
	var refused []Rule
	for i := range rules.Allow {
		switch RuleMatch(BehaviorAllow, rules.Allow[i], ctx, registry) {
		case Matched:
			return Evaluation{Decision: DecisionAllow, Rule: &rules.Allow[i], Refused: refused}
		case Refused:
			refused = append(refused, rules.Allow[i])
		}
	}
	return Evaluation{Decision: DecisionDefault, Refused: refused}
}
