package gemini

import (
	"fmt"

	"github.com/sessionfix/sessionfix/mcpname"
)

// Release is one Gemini CLI release ("0.61.0").
type Release struct {
	V    [3]int
	Text string
}

// ParseRelease parses a release as --gemini-version takes it ("0.32.1", "0.34.0-preview.1"); the
// error wraps mcpname.ErrGeminiVersion.
func ParseRelease(s string) (Release, error) {
	v, err := mcpname.ParseGeminiVersion(s)
	if err != nil {
		return Release{}, err
	}
	return Release{V: v, Text: s}, nil
}

// MustRelease is ParseRelease for constants; it panics on a bad release.
func MustRelease(s string) Release {
	r, err := ParseRelease(s)
	if err != nil {
		panic(err)
	}
	return r
}

// Latest is the newest recorded release (mcpname.GeminiLatestVersion): the default "now".
var Latest = MustRelease(mcpname.GeminiLatestVersion)

// String is the release as given.
func (r Release) String() string { return r.Text }

// AtLeast reports whether r is v or newer.
func (r Release) AtLeast(v [3]int) bool { return mcpname.CompareClaudeVersions(r.V, v) >= 0 }

// PolicyEra is how a release's policy engine names and matches MCP tools.
type PolicyEra int

const (
	// PolicyNone (up to 0.22.x): no policy engine decides MCP calls (the TOML loader exists
	// from 0.13.0, but its decisions only reached tool calls through the message bus, off by
	// default until 0.24.0): policies/*.toml, tools.exclude and tools.allowed rules decide
	// nothing for an MCP tool; a call asks for confirmation unless the mode is yolo or
	// tools.allowed names the declared tool.
	PolicyNone PolicyEra = iota
	// PolicyComposite (0.24.0 to 0.32.x; recorded 0.32.1): a call is matched under its
	// declared name and, when that has no "__", under "<server>__<declared name>"; "<server>__*"
	// (and, from 0.26.0, "*__<tool>", "*__*") are wildcards; a TOML mcpName makes
	// "<mcpName>__<toolName>".
	PolicyComposite
	// PolicyQualified (0.33.0 on; recorded 0.33.2, 0.61.0): a call is matched under its
	// declared mcp_<server>_<tool> name and its raw server key; a TOML mcpName makes
	// "mcp_<mcpName>_<toolName>" (not sanitized) and requires the raw server key to equal
	// mcpName; "mcp_<server>_*" and "mcp_*" are wildcards.
	PolicyQualified
)

// Features is what one release does with tool rules, read in the npm packages
// (@google/gemini-cli-core and @google/gemini-cli; each field names the first release seen
// doing it and the release before it that does not; recorded releases are 0.10.0, 0.32.1,
// 0.33.2 and 0.61.0). Releases between two read ones are placed by the first one read.
type Features struct {
	// Naming is the naming era (mcpname.GeminiEraOf).
	Naming mcpname.GeminiEra
	// Policy is the policy engine's era (PolicyEra: 0.24.0 on, 0.22.4 not; 0.33.0 qualified).
	Policy PolicyEra
	// ExcludeHidesMCP: tools.exclude is compared with MCP tools' names (declared name, and
	// "<server>__" + name or the name after the server prefix): 0.15.1 on, 0.14.0 not
	// (tool-registry.ts isActiveTool); before, it only removed built-in tools.
	ExcludeHidesMCP bool
	// MigratesLegacyExclude: a top-level "excludeTools" (settings format v1) is read as
	// tools.exclude: up to 0.22.4 (MIGRATION_MAP of cli settings.ts), 0.24.0 not.
	MigratesLegacyExclude bool
	// CompositeWildcards: "*__<tool>" and "*__*" match (PolicyComposite only): 0.26.0 on,
	// 0.25.2 not.
	CompositeWildcards bool
	// PolicyHides: a tool a deny rule decides is not declared to the model (hidden) rather
	// than declared and refused (denied): 0.30.0 on, 0.29.0 not (config.ts getExcludeTools
	// asks PolicyEngine.getExcludedTools).
	PolicyHides bool
	// DefaultDenyHides: a tool no rule decides, refused by the default decision (headless),
	// is hidden too: 0.33.0 on, 0.32.1 not (getExcludedTools' default).
	DefaultDenyHides bool
	// WorkspacePolicies: <project>/.gemini/policies/*.toml are read (tier below user): 0.31.0
	// on, 0.30.0 not.
	WorkspacePolicies bool
	// WarnsDoubleUnderscore: a TOML toolName with "__" gets the warning 'The "__" syntax for
	// MCP tools is strictly deprecated' (the rule still loads): 0.33.0 on, 0.32.1 not.
	WarnsDoubleUnderscore bool
	// ToolNameRequired: a TOML rule without toolName fails the schema, which drops the whole
	// file: 0.36.0 on, 0.35.3 not (before, a rule without toolName applies to every tool).
	ToolNameRequired bool
	// CoreRestrictsMCP: tools.core allows the tools it lists and denies every other (MCP
	// tools included) in the modes other than plan: 0.40.0 on, 0.36.0 not (before, it only
	// chose the built-in tools registered).
	CoreRestrictsMCP bool
	// ConfirmationRequired: tools.confirmationRequired is read, each entry an ask rule at
	// priority user+0.35 (above tools.allowed, tools.core and the yolo allow-all; policy/
	// config.ts CONFIRMATION_REQUIRED_PRIORITY): 0.39.1 on, 0.39.0 not (@google/gemini-cli).
	ConfirmationRequired bool
	// WarnsSettingsLists: a non-empty tools.exclude, and a non-empty tools.allowed, get a
	// start-up warning that the list "is deprecated and will be removed in 1.0" (gemini.tsx):
	// 0.30.0 on, 0.29.0 not (@google/gemini-cli).
	WarnsSettingsLists bool
}

// FeaturesOf returns what release r does (see Features for the sources).
func FeaturesOf(r Release) Features {
	era, _ := mcpname.GeminiEraOf(r.Text)
	f := Features{Naming: era}
	switch {
	case r.AtLeast([3]int{0, 33, 0}):
		f.Policy = PolicyQualified
	case r.AtLeast([3]int{0, 24, 0}):
		f.Policy = PolicyComposite
	}
	f.ExcludeHidesMCP = r.AtLeast([3]int{0, 15, 0})
	f.MigratesLegacyExclude = !r.AtLeast([3]int{0, 24, 0})
	f.CompositeWildcards = f.Policy == PolicyComposite && r.AtLeast([3]int{0, 26, 0})
	f.PolicyHides = r.AtLeast([3]int{0, 30, 0})
	f.DefaultDenyHides = r.AtLeast([3]int{0, 33, 0})
	f.WorkspacePolicies = r.AtLeast([3]int{0, 31, 0})
	f.WarnsDoubleUnderscore = r.AtLeast([3]int{0, 33, 0})
	f.ToolNameRequired = r.AtLeast([3]int{0, 36, 0})
	f.CoreRestrictsMCP = r.AtLeast([3]int{0, 40, 0})
	f.ConfirmationRequired = r.AtLeast([3]int{0, 39, 1})
	f.WarnsSettingsLists = r.AtLeast([3]int{0, 30, 0})
	return f
}

// Mode is the approval mode the CLI runs in (--approval-mode; settings
// general.defaultApprovalMode): default, auto_edit or yolo.
type Mode string

// The approval modes modelled ("plan" is not: it restricts every tool to the plan tools).
const (
	ModeDefault  Mode = "default"
	ModeAutoEdit Mode = "auto_edit"
	ModeYolo     Mode = "yolo"
)

// ParseMode parses --approval-mode's value.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeDefault, ModeAutoEdit, ModeYolo:
		return Mode(s), nil
	}
	return "", fmt.Errorf("approval mode %q: want default, auto_edit or yolo", s)
}

// policyMode is the mode's name in policy files ("modes = [...]": default, autoEdit, yolo).
func (m Mode) policyMode() string {
	if m == ModeAutoEdit {
		return "autoEdit"
	}
	return string(m)
}
