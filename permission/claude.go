package permission

import (
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
)

// This file holds Claude Code's MCP permission-rule semantics per release, as pure functions.
// Sources, in order of weight:
//   - the recording of fixtures/claude-real/README.md ("Rules"): 1.0.51 and 2.1.332 run
//     against the same rule files (what ran, what was refused, denied, not offered);
//   - the shipped code of 1.0.51 (cli.js of @anthropic-ai/claude-code@1.0.51 from the npm
//     registry): only allow and deny lists (no ask), the matcher ecA below, legacy
//     allowedTools of ~/.claude.json read as allow rules and moved into
//     .claude/settings.local.json at start-up;
//   - issue 11 (five recorded releases: 1.0.0, 1.0.51, 2.0.14, 2.1.90, 2.1.332) for the release
//     each behaviour was first seen in;
//   - schemes.md §C.3 (leaked-source toolMatchesRule), second-hand.
//
// A release between two recorded ones is given the behaviour of the older recorded one: a
// feature is on from the first recorded release that showed it (ClaudeFeaturesOf).

// ClaudeRelease is a Claude Code release version, {major, minor, patch} (2.1.332 is
// {2, 1, 332}); versions are parsed and ordered by package mcpname (ParseClaudeVersion,
// CompareClaudeVersions).
type ClaudeRelease [3]int

// The Claude Code releases issue 11 recorded (mcpname.ClaudeRecordedVersions).
var (
	Claude1_0_0   = ClaudeRelease{1, 0, 0}
	Claude1_0_51  = ClaudeRelease{1, 0, 51}
	Claude2_0_14  = ClaudeRelease{2, 0, 14}
	Claude2_1_90  = ClaudeRelease{2, 1, 90}
	Claude2_1_332 = ClaudeRelease{2, 1, 332}
)

// ClaudeKnownReleases are the recorded releases, oldest first (mcpname.ClaudeRecordedVersions).
var ClaudeKnownReleases = func() []ClaudeRelease {
	out := make([]ClaudeRelease, len(mcpname.ClaudeRecordedVersions))
	for i, v := range mcpname.ClaudeRecordedVersions {
		out[i] = MustClaudeRelease(v)
	}
	return out
}()

// ClaudeNewest is the newest recorded release (mcpname.ClaudeLatestVersion), the default
// "now" of audit --agent claude.
func ClaudeNewest() ClaudeRelease { return MustClaudeRelease(mcpname.ClaudeLatestVersion) }

// ParseClaudeRelease reads a version as session lines spell it ("2.1.332"; a "-beta.1" or
// "+build" suffix is ignored; see mcpname.ParseClaudeVersion). A leading "v" is accepted.
// The error wraps mcpname.ErrClaudeVersion.
func ParseClaudeRelease(s string) (ClaudeRelease, error) {
	v, err := mcpname.ParseClaudeVersion(strings.TrimPrefix(strings.TrimSpace(s), "v"))
	return ClaudeRelease(v), err
}

// MustClaudeRelease is ParseClaudeRelease for versions known to be valid; it panics otherwise.
func MustClaudeRelease(s string) ClaudeRelease {
	r, err := ParseClaudeRelease(s)
	if err != nil {
		panic(err)
	}
	return r
}

// String is "MAJOR.MINOR.PATCH".
func (r ClaudeRelease) String() string { return fmt.Sprintf("%d.%d.%d", r[0], r[1], r[2]) }

// Compare returns -1, 0 or +1 as r is older than, equal to or newer than o.
func (r ClaudeRelease) Compare(o ClaudeRelease) int { return mcpname.CompareClaudeVersions(r, o) }

// AtLeast reports whether r is o or newer.
func (r ClaudeRelease) AtLeast(o ClaudeRelease) bool { return r.Compare(o) >= 0 }

// IsZero reports whether r is the zero value (no release).
func (r ClaudeRelease) IsZero() bool { return r == ClaudeRelease{} }

// Era is the naming era of the release (mcpname.ClaudeEraOf).
func (r ClaudeRelease) Era() mcpname.ClaudeEra {
	e, _ := mcpname.ClaudeEraOf(r.String())
	return e
}

// Name is the model-visible name the release gives the raw MCP tool (mcpname.ClaudeNameIn).
func (r ClaudeRelease) Name(server, tool string) string {
	return mcpname.ClaudeNameIn(r.Era(), server, tool)
}

// ClaudeFeatures are the rule behaviours of one release (ClaudeFeaturesOf).
type ClaudeFeatures struct {
	Release ClaudeRelease
	// ServerRule: "mcp__<server as the name spells it>" matches every tool of the server
	// (from 1.0.51; 1.0.51's matcher: rule without a tool part, same server part).
	ServerRule bool
	// ServerWildcard: "mcp__<server>__*" matches every tool of the server (from 2.1.90;
	// 1.0.51 compares "*" as a tool name).
	ServerWildcard bool
	// PartialGlob: "mcp__<server>__<glob>" ("mcp__lit__get_*") matches the server's tools
	// whose tool part the glob matches (2.1.332; not at 2.1.90).
	PartialGlob bool
	// AskRules: permissions.ask is applied (not by 1.0.51, whose settings schema and
	// checker know only allow and deny: recorded, `get+data` ran under a matching ask rule;
	// applied by 2.1.332; taken as from 2.0.14, the next recorded release).
	AskRules bool
	// DenyHides: a deny rule that names the tool removes it from the tool list sent to the
	// model ("not offered", from 2.1.90); before, the tool is offered and its call denied.
	DenyHides bool
	// TrustGatesProjectAllow: allow rules of the project's shared file (.claude/settings.json)
	// are ignored while the project is not trusted (hasTrustDialogAccepted in ~/.claude.json);
	// its deny and ask rules still apply, and so do the allow rules of
	// .claude/settings.local.json (verified with the 2.1.332 binary: "Ignoring 1
	// permissions.allow entry from .claude/settings.json: this workspace has not been trusted",
	// while a local allow still ran). Recorded for 2.1.332; older releases apply them regardless.
	TrustGatesProjectAllow bool
	// ServerStarRestricts: "mcp__*" in deny or ask matches every MCP tool (a deny then removes
	// them all from the list). Verified with the 2.1.332 binary; in allow 2.1.332 skips it as an
	// invalid rule, and 1.0.51's matcher compares "*" as a server name, so there it never matches.
	ServerStarRestricts bool
	// LegacyAllowedTools: projects[<dir>].allowedTools of ~/.claude.json is read as allow
	// rules (1.0.0 kept rules there; 1.0.51 still reads them, and moves them into
	// .claude/settings.local.json at start-up, leaving the list empty). 2.1.332 neither reads
	// nor moves them (run with the 2.1.332 binary: an allowedTools entry of a trusted project
	// granted nothing and stayed in the file); taken as read before 2.1.332.
	LegacyAllowedTools bool
}

// ClaudeFeaturesOf returns the rule behaviours of release r (see ClaudeFeatures for the
// release each behaviour was recorded from).
func ClaudeFeaturesOf(r ClaudeRelease) ClaudeFeatures {
	return ClaudeFeatures{
		Release:                r,
		ServerRule:             r.AtLeast(Claude1_0_51),
		ServerWildcard:         r.AtLeast(Claude2_1_90),
		PartialGlob:            r.AtLeast(Claude2_1_332),
		AskRules:               r.AtLeast(Claude2_0_14),
		DenyHides:              r.AtLeast(Claude2_1_90),
		TrustGatesProjectAllow: r.AtLeast(Claude2_1_332),
		ServerStarRestricts:    r.AtLeast(Claude2_1_332),
		LegacyAllowedTools:     !r.AtLeast(Claude2_1_332),
	}
}

// ClaudeMCPName is a name split the way Claude Code splits it (mcpInfoFromString, 1.0.51's
// Qy1): on "__"; part 0 must be "mcp" and part 1 (the server) not empty; the tool is the
// remaining parts joined by "__", absent when there are none. A server whose spelling holds
// "__" splits wrongly; Claude Code does the same.
type ClaudeMCPName struct {
	Server  string
	Tool    string
	HasTool bool
}

// ParseClaudeMCPName splits name; ok is false when it is not an MCP name.
func ParseClaudeMCPName(name string) (n ClaudeMCPName, ok bool) {
	parts := strings.Split(name, "__")
	if len(parts) < 2 || parts[0] != "mcp" || parts[1] == "" {
		return ClaudeMCPName{}, false
	}
	n.Server = parts[1]
	if len(parts) > 2 {
		n.Tool, n.HasTool = strings.Join(parts[2:], "__"), true
	}
	return n, true
}

// ClaudeRuleMatches reports whether the permission rule text names the MCP tool that release f
// calls name (the model-visible name, as that release spells it: see mcpname), for an allow
// rule; ClaudeKindMatches takes the list into account ("mcp__*" in deny and ask).
//
//   - A rule with content ("Tool(…)") never matches an MCP tool.
//   - A whole-name rule matches when it equals name: a rule written in another release's
//     spelling does not match (the recorded "legacy deny stops denying").
//   - "mcp__<s>" (no tool part) matches every tool whose server part is s, with ServerRule.
//     The server part of the name is normalized from 1.0.11, so a rule naming the raw key
//     ("mcp__foo.bar") never matches.
//   - "mcp__<s>__*" with ServerWildcard; any other tool part with "*" ("mcp__lit__get_*")
//     with PartialGlob, as a glob over the tool part ("*": any run of characters; 2.1.332
//     compiles the tool part as a glob when it has one; only a trailing "*" was recorded).
//   - A glob in the server part ("mcp__*", "mcp__gith*") never matches here: servers compare
//     by equality (but see ClaudeKindMatches for "mcp__*" in deny and ask from 2.1.332).
func ClaudeRuleMatches(f ClaudeFeatures, rule, name string) bool {
	if strings.Contains(rule, "(") {
		return false
	}
	if rule == name {
		return true
	}
	r, ok1 := ParseClaudeMCPName(rule)
	t, ok2 := ParseClaudeMCPName(name)
	if !ok1 || !ok2 || r.Server != t.Server {
		return false
	}
	switch {
	case !r.HasTool:
		return f.ServerRule
	case r.Tool == "*":
		return f.ServerWildcard
	case strings.Contains(r.Tool, "*"):
		return f.PartialGlob && t.HasTool && starGlob(r.Tool, t.Tool)
	}
	return false
}

// starGlob reports whether s matches pattern, where "*" stands for any run of characters
// (possibly empty) and every other character for itself.
func starGlob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(parts) > 1 && strings.HasSuffix(s, last)
}

// ClaudeKindMatches is ClaudeRuleMatches for a rule of list kind: with ServerStarRestricts,
// "mcp__*" (and "mcp__*__*") in deny or ask names every MCP tool.
func ClaudeKindMatches(f ClaudeFeatures, kind ClaudeKind, rule, name string) bool {
	if f.ServerStarRestricts && kind != ClaudeAllow && (rule == "mcp__*" || rule == "mcp__*__*") {
		_, ok := ParseClaudeMCPName(name)
		return ok
	}
	return ClaudeRuleMatches(f, rule, name)
}

// ClaudeScope is where a Claude Code rule comes from.
type ClaudeScope string

// Scopes, lowest precedence first. Precedence does not matter for MCP rules (deny, then ask,
// then allow, across every scope), but it is the order rules are listed in.
const (
	ClaudeScopeUser    ClaudeScope = "user"    // ~/.claude/settings.json
	ClaudeScopeProject ClaudeScope = "project" // <project>/.claude/settings.json
	ClaudeScopeLocal   ClaudeScope = "local"   // <project>/.claude/settings.local.json
	// ClaudeScopeLegacy: projects[<project>].allowedTools in ~/.claude.json (1.0.0).
	ClaudeScopeLegacy  ClaudeScope = "legacy"
	ClaudeScopeManaged ClaudeScope = "managed" // managed-settings.json (and managed-settings.d)
)

// TrustGated reports whether an untrusted project's allow rules from this scope are ignored
// (TrustGatesProjectAllow): only the shared project file; the local file and the legacy
// allowedTools of ~/.claude.json are the user's own.
func (s ClaudeScope) TrustGated() bool { return s == ClaudeScopeProject }

// ClaudeKind is the list a rule is in.
type ClaudeKind string

// Rule lists.
const (
	ClaudeAllow ClaudeKind = "allow"
	ClaudeAsk   ClaudeKind = "ask"
	ClaudeDeny  ClaudeKind = "deny"
)

// ClaudeRule is one rule with the list and scope it comes from.
type ClaudeRule struct {
	Text  string
	Kind  ClaudeKind
	Scope ClaudeScope
}

// ClaudeApplies reports whether release f applies rule r at all in a project whose trust is
// trusted: ask rules need AskRules; allow rules of a project-owned scope need a trusted
// project under TrustGatesProjectAllow; legacy allowedTools need LegacyAllowedTools. A rule
// that names a tool but is not applied is "ignored" in the audit.
func ClaudeApplies(f ClaudeFeatures, r ClaudeRule, trusted bool) bool {
	switch {
	case r.Kind == ClaudeAsk && !f.AskRules:
		return false
	case r.Scope == ClaudeScopeLegacy && !f.LegacyAllowedTools:
		return false
	case r.Kind == ClaudeAllow && r.Scope.TrustGated() && f.TrustGatesProjectAllow && !trusted:
		return false
	}
	return true
}

// ClaudeMatch is a (rule, tool) pair's value at one release.
type ClaudeMatch string

// Pair values.
const (
	ClaudeNo      ClaudeMatch = "no"      // the rule does not name the tool
	ClaudeMatched ClaudeMatch = "match"   // the rule names the tool and the release applies it
	ClaudeIgnored ClaudeMatch = "ignored" // the rule names the tool but the release does not apply it
)

// ClaudePairMatch is the value of rule r for the tool release f calls name, in a project
// whose trust is trusted.
func ClaudePairMatch(f ClaudeFeatures, r ClaudeRule, name string, trusted bool) ClaudeMatch {
	if !ClaudeKindMatches(f, r.Kind, r.Text, name) {
		return ClaudeNo
	}
	if !ClaudeApplies(f, r, trusted) {
		return ClaudeIgnored
	}
	return ClaudeMatched
}

// ClaudeDecisionKind is a tool's decision.
type ClaudeDecisionKind string

// Decisions.
const (
	ClaudeDecisionDeny    ClaudeDecisionKind = "deny"
	ClaudeDecisionAsk     ClaudeDecisionKind = "ask"
	ClaudeDecisionAllow   ClaudeDecisionKind = "allow"
	ClaudeDecisionDefault ClaudeDecisionKind = "default" // no rule: the release asks
)

// ClaudeOutcome is what happens when the model calls the tool, in Claude Code's default
// permission mode.
type ClaudeOutcome string

// Outcomes. In headless mode (claude -p) an ask is refused ("… but you haven't granted it
// yet."): the recording's "refused" is ClaudeOutcomeAsk.
const (
	ClaudeOutcomeRan        ClaudeOutcome = "ran"
	ClaudeOutcomeAsk        ClaudeOutcome = "ask"
	ClaudeOutcomeBlock      ClaudeOutcome = "block"       // offered, the call is denied
	ClaudeOutcomeNotOffered ClaudeOutcome = "not offered" // a deny removed it from the tool list
)

// ClaudeDecision is a tool's decision and outcome at one release.
type ClaudeDecision struct {
	Decision ClaudeDecisionKind
	// Rule is the index in the rules slice of the rule that decided, -1 for default.
	Rule    int
	Outcome ClaudeOutcome
}

// ClaudeDecide is release f's decision for the tool it calls name: the first applied deny
// rule that names it (in rules order), else the first applied ask, else the first applied
// allow, else default (1.0.51's checker: deny, then allow; ask added later, between them;
// specificity does not break the tie). Outcomes: deny → block, or not offered with
// DenyHides; ask and default → ask; allow → ran.
func ClaudeDecide(f ClaudeFeatures, rules []ClaudeRule, name string, trusted bool) ClaudeDecision {
	for _, k := range []ClaudeKind{ClaudeDeny, ClaudeAsk, ClaudeAllow} {
		for i, r := range rules {
			if r.Kind != k || ClaudePairMatch(f, r, name, trusted) != ClaudeMatched {
				continue
			}
			d := ClaudeDecision{Decision: ClaudeDecisionKind(k), Rule: i}
			switch k {
			case ClaudeDeny:
				d.Outcome = ClaudeOutcomeBlock
				if f.DenyHides {
					d.Outcome = ClaudeOutcomeNotOffered
				}
			case ClaudeAsk:
				d.Outcome = ClaudeOutcomeAsk
			default:
				d.Outcome = ClaudeOutcomeRan
			}
			return d
		}
	}
	return ClaudeDecision{Decision: ClaudeDecisionDefault, Rule: -1, Outcome: ClaudeOutcomeAsk}
}
