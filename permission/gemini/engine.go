package gemini

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
)

// Tool is one raw MCP tool: the settings' mcpServers key and the name the server lists.
type Tool struct {
	Server string `json:"server"`
	Name   string `json:"tool"`
}

// String is "server/tool".
func (t Tool) String() string { return t.Server + "/" + t.Name }

// Outcome is what a release does with a tool (the recording's words, rules/outcomes.json).
type Outcome string

// The outcomes, from the most to the least restrictive.
const (
	// Hidden: not declared to the model (a server filter, tools.exclude, a policy the
	// release applies before declaring, or another tool declared under the same name).
	Hidden Outcome = "hidden"
	// Denied: declared; every call is answered "Tool execution denied by policy." (or refused
	// for a confirmation headless mode cannot ask).
	Denied Outcome = "denied"
	// Ask: declared; each call waits for the user's confirmation.
	Ask Outcome = "ask"
	// Ran: declared and run without asking.
	Ran Outcome = "ran"
)

// Strength orders outcomes: hidden 3, denied 2, ask 1, ran 0.
func (o Outcome) Strength() int {
	switch o {
	case Hidden:
		return 3
	case Denied:
		return 2
	case Ask:
		return 1
	}
	return 0
}

// RuleKind says which list or file a rule comes from.
type RuleKind string

// The kinds of rules.
const (
	KindExclude       RuleKind = "tools.exclude"
	KindLegacyExclude RuleKind = "excludeTools"
	KindAllowed       RuleKind = "tools.allowed"
	KindCore          RuleKind = "tools.core"
	KindConfirm       RuleKind = "tools.confirmationRequired"
	KindServerExclude RuleKind = "mcpServers.excludeTools"
	KindServerInclude RuleKind = "mcpServers.includeTools"
	KindTrust         RuleKind = "mcpServers.trust"
	KindMCPExcluded   RuleKind = "mcp.excluded"
	KindPolicy        RuleKind = "policy"
	// KindDefault is a release's own rule (the yolo allow-all, the default decision).
	KindDefault RuleKind = "default"
)

// RuleRef names one rule of the input: its kind, file, scope and place, and its text as a user
// reads it. ID is stable across releases ("<file>#tools.exclude[0]", "<file>#rule[2]").
type RuleRef struct {
	ID       string   `json:"id"`
	Kind     RuleKind `json:"kind"`
	Scope    Scope    `json:"scope,omitempty"`
	Pos      Pos      `json:"pos"`
	Text     string   `json:"text"`
	Decision string   `json:"decision"` // allow, deny, ask_user; "hide" for server filters
	// Entry is the string the rule is (a settings list entry; a policy rule's toolName when it
	// has one string); Policy the policy rule.
	Entry  *Entry      `json:"-"`
	Policy *PolicyRule `json:"-"`
	File   *PolicyFile `json:"-"`
}

// Config is the input of Evaluate: a release, an approval mode, whether the CLI runs
// interactively (-p runs headless), the settings files of every scope, the policy files, and
// the raw tools in the order their servers registered them (which decides who got a bare name
// before 0.33.0).
type Config struct {
	Release     Release
	Mode        Mode
	Interactive bool
	Settings    []*SettingsFile
	Policies    []*PolicyFile
	Tools       []Tool
	// UntrustedWorkspace: the folder is not trusted, so workspace settings and policies are
	// not read.
	UntrustedWorkspace bool
}

// Verdict is what the release does with one tool.
type Verdict struct {
	Tool Tool `json:"tool"`
	// Name is the name the release declares for the tool ("" when it registers none).
	Name    string  `json:"name"`
	Outcome Outcome `json:"outcome"`
	// By is the rule that decided (nil: the release's default for the mode).
	By *RuleRef `json:"by,omitempty"`
	// Why says so in a sentence.
	Why string `json:"why"`
	// Matches are every input rule that applies to the tool in this release, deciding or not.
	Matches []*RuleRef `json:"matches,omitempty"`
	// ArgsDependent are rules that apply to some calls of the tool only (their argsPattern):
	// the outcome holds for calls they do not match.
	ArgsDependent []*RuleRef `json:"args_dependent,omitempty"`
}

// RuleResult is one input rule in one release: the tools it matches and whether the release
// applies it at all.
type RuleResult struct {
	Ref     *RuleRef `json:"rule"`
	Matches []Tool   `json:"matches"`
	// Ignored says why the release does not apply the rule ("" when it does): its file is
	// rejected or not read, the key is not read, a workspace is untrusted.
	Ignored string `json:"ignored,omitempty"`
}

// Finding is something about the rules the audit reports besides outcomes.
type Finding struct {
	Kind FindingKind `json:"kind"`
	Pos  Pos         `json:"pos"`
	// Rule is the rule it is about (nil for a whole file).
	Rule    *RuleRef `json:"rule,omitempty"`
	Message string   `json:"message"`
	// Dropped are the rules a rejected file drops; Tools the tools a bare exclude hits.
	Dropped []*RuleRef `json:"dropped,omitempty"`
	Tools   []Tool     `json:"tools,omitempty"`
}

// FindingKind is the kind of a Finding.
type FindingKind string

// The kinds of findings.
const (
	// FindingRejectedFile: the release drops every rule of a policy file.
	FindingRejectedFile FindingKind = "rejected-file"
	// FindingDeprecated: the release prints a warning about the rule and still loads it.
	FindingDeprecated FindingKind = "deprecated"
	// FindingRuleError: the release reports an error about a rule without dropping the file.
	FindingRuleError FindingKind = "rule-error"
	// FindingBareExclude: a bare tools.exclude entry hides tools of several servers.
	FindingBareExclude FindingKind = "bare-exclude"
	// FindingIgnored: the release does not read the rule (a v1 key no longer migrated, a
	// policy file before policies applied to tool calls, an untrusted workspace).
	FindingIgnored FindingKind = "ignored"
	// FindingSettings: a settings entry that is no rule (not a string, not a list).
	FindingSettings FindingKind = "settings"
)

// Result is Evaluate's answer for one release and mode.
type Result struct {
	Release     Release       `json:"release"`
	Mode        Mode          `json:"mode"`
	Interactive bool          `json:"interactive"`
	Tools       []Verdict     `json:"tools"`
	Rules       []*RuleResult `json:"rules"`
	Findings    []Finding     `json:"findings"`
}

// Verdict returns the verdict on tool t, or nil.
func (r *Result) Verdict(t Tool) *Verdict {
	for i := range r.Tools {
		if r.Tools[i].Tool == t {
			return &r.Tools[i]
		}
	}
	return nil
}

// Rule returns the result of the rule with ID id, or nil.
func (r *Result) Rule(id string) *RuleResult {
	for _, rr := range r.Rules {
		if rr.Ref.ID == id {
			return rr
		}
	}
	return nil
}

// prule is one rule as the release's policy engine holds it.
type prule struct {
	toolName    string
	hasToolName bool
	mcpName     string
	hasMCPName  bool
	decision    string
	priority    float64
	modes       []string
	interactive *bool
	subagent    string
	argsDep     bool
	annotations bool
	ref         *RuleRef
}

// Priority tiers (policy/config.ts of 0.33.0 on; the earlier numbering keeps the same order:
// default < workspace < user < admin, the settings-made rules inside the user tier).
const (
	tierDefault   = 1
	tierWorkspace = 3
	tierUser      = 4
	tierAdmin     = 5

	priMCPExcluded = tierUser + 0.9
	priExclude     = tierUser + 0.4
	priConfirm     = tierUser + 0.35
	priAllowed     = tierUser + 0.3
	priCore        = tierUser + 0.25
	priTrust       = tierUser + 0.2
)

var nonPlanModes = []string{"default", "autoEdit", "yolo"}

// mcpClassName is the class name the CLI also compares rules with ("DiscoveredMCPTool").
const mcpClassName = "DiscoveredMCPTool"

// Evaluate models what release c.Release does with every tool of c.Tools under the rules of
// c.Settings and c.Policies in mode c.Mode (see Features for what each release does and the
// source of each rule). It never reads a file.
func Evaluate(c Config) *Result {
	feat := FeaturesOf(c.Release)
	e := &evaluation{c: c, feat: feat, res: &Result{Release: c.Release, Mode: c.Mode, Interactive: c.Interactive}}
	e.gatherSettings()
	e.gatherPolicies()
	e.register()
	e.decide()
	e.ruleResults()
	e.bareExcludes()
	return e.res
}

type evaluation struct {
	c    Config
	feat Features
	res  *Result

	exclude, legacy, allowed, core, confirm []*RuleRef
	allowedScope, coreScope, confirmScope   Scope
	servers                                 map[string]*serverConf
	mcpExcluded                             []*RuleRef
	refs                                    []*RuleRef // every input rule, in input order
	ignored                                 map[string]string
	rules                                   []*prule // the policy engine's rules, sorted
	regs                                    []*reg
}

type serverConf struct {
	s     Server
	scope Scope
	file  string
	inc   []*RuleRef
	exc   []*RuleRef
	trust *RuleRef
}

// reg is one tool as the release registers it.
type reg struct {
	t        Tool
	name     string
	hiddenBy *RuleRef
	why      string
}

func (e *evaluation) addRef(r *RuleRef, ignored string) *RuleRef {
	e.refs = append(e.refs, r)
	if ignored != "" {
		if e.ignored == nil {
			e.ignored = map[string]string{}
		}
		e.ignored[r.ID] = ignored
	}
	return r
}

func entryRef(f *SettingsFile, kind RuleKind, en Entry, decision string) *RuleRef {
	return &RuleRef{ID: fmt.Sprintf("%s#%s[%d]", f.Path, en.Key, en.Index), Kind: kind, Scope: f.Scope, Pos: en.Pos,
		Text: fmt.Sprintf("%s: %q", en.Key, en.Value), Decision: decision, Entry: &en}
}

// gatherSettings merges the settings scopes as the CLI does: tools.exclude is the union of every
// scope; tools.allowed and tools.core are the highest scope's that has them; each mcpServers key
// is the highest scope's definition.
func (e *evaluation) gatherSettings() {
	files := slices.Clone(e.c.Settings)
	sort.SliceStable(files, func(i, j int) bool { return settingsRank(files[i].Scope) < settingsRank(files[j].Scope) })
	e.servers = map[string]*serverConf{}
	for _, f := range files {
		ignored := ""
		if f.Scope == ScopeWorkspace && e.c.UntrustedWorkspace {
			ignored = "the workspace is not trusted: Gemini CLI does not read its settings"
		}
		for _, w := range f.Warnings {
			e.res.Findings = append(e.res.Findings, Finding{Kind: FindingSettings, Pos: Pos{File: f.Path}, Message: w})
		}
		var excl []*RuleRef
		for _, en := range f.Exclude {
			r := e.addRef(entryRef(f, KindExclude, en, "deny"), ignored)
			excl = append(excl, r)
			if ignored == "" {
				e.exclude = append(e.exclude, r)
			}
		}
		for _, en := range f.LegacyExclude {
			why := ignored
			if why == "" && !e.feat.MigratesLegacyExclude {
				why = fmt.Sprintf("Gemini CLI %s no longer reads the top-level excludeTools of settings format v1 (read up to 0.22.x as tools.exclude)", e.c.Release)
			}
			r := e.addRef(entryRef(f, KindLegacyExclude, en, "deny"), why)
			if why == "" {
				e.legacy = append(e.legacy, r)
			} else if ignored == "" {
				e.res.Findings = append(e.res.Findings, Finding{Kind: FindingIgnored, Pos: en.Pos, Rule: r, Message: why})
			}
		}
		var allowed, core, confirm []*RuleRef
		for _, en := range f.Allowed {
			allowed = append(allowed, e.addRef(entryRef(f, KindAllowed, en, "allow"), ignored))
		}
		for _, en := range f.Core {
			core = append(core, e.addRef(entryRef(f, KindCore, en, "allow"), ignored))
		}
		confirmIgnored := ignored
		if confirmIgnored == "" && !e.feat.ConfirmationRequired {
			confirmIgnored = fmt.Sprintf("Gemini CLI %s does not read tools.confirmationRequired (0.39.1 on)", e.c.Release)
		}
		for _, en := range f.Confirm {
			confirm = append(confirm, e.addRef(entryRef(f, KindConfirm, en, "ask"), confirmIgnored))
		}
		if confirmIgnored == "" && f.HasConfirm {
			for _, r := range e.confirm {
				e.addIgnored(r.ID, fmt.Sprintf("tools.confirmationRequired of %s replaces it", f.Path))
			}
			e.confirm, e.confirmScope = confirm, f.Scope
		}
		if ignored == "" && e.feat.WarnsSettingsLists {
			// gemini.tsx warns once per non-empty list of the merged settings; each entry is
			// named, as a rule that stops applying when the list goes.
			for _, r := range append(slices.Clone(excl), allowed...) {
				e.res.Findings = append(e.res.Findings, Finding{Kind: FindingDeprecated, Pos: r.Pos, Rule: r,
					Message: fmt.Sprintf("%s in settings.json is deprecated and will be removed in 1.0: Gemini CLI %s warns at start-up (\"Migrate to Policy Engine\"); the entry still applies", r.Kind, e.c.Release)})
			}
		}
		if ignored == "" && f.HasAllowed {
			for _, r := range e.allowed {
				e.addIgnored(r.ID, fmt.Sprintf("tools.allowed of %s replaces it", f.Path))
			}
			e.allowed, e.allowedScope = allowed, f.Scope
		}
		if ignored == "" && f.HasCore {
			for _, r := range e.core {
				e.addIgnored(r.ID, fmt.Sprintf("tools.core of %s replaces it", f.Path))
			}
			e.core, e.coreScope = core, f.Scope
		}
		for _, en := range f.MCPExcluded {
			r := e.addRef(entryRef(f, KindMCPExcluded, en, "hide"), ignored)
			if ignored == "" {
				e.mcpExcluded = append(e.mcpExcluded, r)
			}
		}
		for _, s := range f.Servers {
			sc := &serverConf{s: s, scope: f.Scope, file: f.Path}
			for _, en := range s.Exclude {
				sc.exc = append(sc.exc, e.addRef(entryRef(f, KindServerExclude, en, "hide"), ignored))
			}
			for _, en := range s.Include {
				sc.inc = append(sc.inc, e.addRef(entryRef(f, KindServerInclude, en, "allow"), ignored))
			}
			if s.Trust {
				sc.trust = e.addRef(&RuleRef{ID: fmt.Sprintf("%s#mcpServers[%q].trust", f.Path, s.Key), Kind: KindTrust, Scope: f.Scope, Pos: s.Pos,
					Text: fmt.Sprintf("mcpServers[%q].trust: true", s.Key), Decision: "allow"}, ignored)
			}
			if ignored != "" {
				continue
			}
			if old := e.servers[s.Key]; old != nil {
				for _, r := range append(append(slices.Clone(old.exc), old.inc...), old.trust) {
					if r != nil {
						e.addIgnored(r.ID, fmt.Sprintf("mcpServers[%q] of %s replaces this definition", s.Key, f.Path))
					}
				}
			}
			e.servers[s.Key] = sc
		}
	}
}

func (e *evaluation) addIgnored(id, why string) {
	if e.ignored == nil {
		e.ignored = map[string]string{}
	}
	e.ignored[id] = why
}

// gatherPolicies builds the release's policy engine rules: the policy files it loads, the rules
// its settings make, its default policies.
func (e *evaluation) gatherPolicies() {
	for _, f := range e.c.Policies {
		fc := f.Check(e.c.Release)
		var refs []*RuleRef
		for _, r := range f.Rules {
			ref := &RuleRef{ID: fmt.Sprintf("%s#rule[%d]", f.Path, r.Index), Kind: KindPolicy, Scope: f.Scope, Pos: r.Pos,
				Text: r.Text(), Decision: r.Decision, Policy: r, File: f}
			if !r.ToolNameList && len(r.ToolNames) == 1 {
				en := r.ToolNames[0]
				ref.Entry = &en
				ref.Pos = en.Pos
			}
			refs = append(refs, ref)
		}
		why := ""
		switch {
		case f.Scope == ScopeWorkspace && e.c.UntrustedWorkspace:
			why = "the workspace is not trusted: Gemini CLI does not read its policies"
		case fc.Ignored:
			why = fc.IgnoredWhy
		case fc.Rejected:
			why = "the file is rejected: " + fc.Reason
			e.res.Findings = append(e.res.Findings, Finding{Kind: FindingRejectedFile, Pos: fc.Pos, Message: fc.Reason, Dropped: refs})
		}
		for _, ref := range refs {
			e.addRef(ref, why)
		}
		if why != "" {
			continue
		}
		for _, w := range fc.Warnings {
			kind := FindingDeprecated
			if !strings.Contains(w.Message, "deprecated") {
				kind = FindingRuleError
			}
			e.res.Findings = append(e.res.Findings, Finding{Kind: kind, Pos: w.Pos, Rule: refs[w.Rule], Message: w.Message})
		}
		tier := tierUser
		switch f.Scope {
		case ScopeWorkspace:
			tier = tierWorkspace
		case ScopeSystem:
			tier = tierAdmin
		}
		for i, r := range f.Rules {
			base := prule{decision: r.Decision, priority: float64(tier) + float64(r.Priority)/1000, modes: r.Modes,
				argsDep: r.ArgsDependent, annotations: r.Annotations, ref: refs[i]}
			if e.feat.Policy == PolicyQualified {
				base.interactive, base.subagent = r.Interactive, r.Subagent
			}
			if r.MCPName != nil {
				base.mcpName, base.hasMCPName = r.MCPName.Value, true
			}
			names := r.ToolNames
			if len(names) == 0 {
				p := base
				if p.hasMCPName {
					p.hasToolName = true
					p.toolName = e.serverWildcard(p.mcpName)
				}
				e.rules = append(e.rules, &p)
				continue
			}
			for _, n := range names {
				p := base
				p.hasToolName = true
				p.toolName = n.Value
				if p.hasMCPName {
					p.toolName = e.qualify(p.mcpName, n.Value)
				}
				e.rules = append(e.rules, &p)
			}
		}
	}
	if e.feat.Policy == PolicyNone {
		return
	}
	for _, r := range e.exclude {
		e.rules = append(e.rules, &prule{toolName: r.Entry.Value, hasToolName: true, decision: "deny", priority: priExclude, ref: r})
	}
	for _, r := range e.allowed {
		name := r.Entry.Value
		if open := strings.IndexByte(name, '('); open > 0 && strings.HasSuffix(name, ")") && bareToolName(name[:open]) {
			name = name[:open] // "tool(args)": args narrow only shell commands
		}
		e.rules = append(e.rules, &prule{toolName: name, hasToolName: true, decision: "allow", priority: priAllowed, ref: r})
	}
	for _, r := range e.confirm {
		e.rules = append(e.rules, &prule{toolName: r.Entry.Value, hasToolName: true, decision: "ask_user", priority: priConfirm, ref: r})
	}
	if e.feat.CoreRestrictsMCP && len(e.core) > 0 {
		for _, r := range e.core {
			name := r.Entry.Value
			if open := strings.IndexByte(name, '('); open > 0 && strings.HasSuffix(name, ")") {
				name = name[:open]
			}
			e.rules = append(e.rules, &prule{toolName: name, hasToolName: true, decision: "allow", priority: priCore, modes: nonPlanModes, ref: r})
		}
		first := e.core[0]
		e.rules = append(e.rules, &prule{toolName: "*", hasToolName: true, decision: "deny", priority: priCore - 0.01, modes: nonPlanModes,
			ref: &RuleRef{ID: first.ID + "/enforcement", Kind: KindCore, Scope: first.Scope, Pos: first.Pos,
				Text: "tools.core (every tool it does not list)", Decision: "deny"}})
	}
	for _, key := range sortedKeys(e.servers) {
		if sc := e.servers[key]; sc.trust != nil {
			p := &prule{hasToolName: true, toolName: e.serverWildcard(key), decision: "allow", priority: priTrust, ref: sc.trust}
			if e.feat.Policy == PolicyQualified {
				p.mcpName, p.hasMCPName, p.modes = key, true, nonPlanModes
			}
			e.rules = append(e.rules, p)
		}
	}
	// The default policies' yolo rule (policies/yolo.toml: "allow every tool in yolo mode").
	yolo := &RuleRef{ID: "default#yolo", Kind: KindDefault, Text: "the yolo mode's allow-all default policy", Decision: "allow"}
	if e.feat.Policy == PolicyQualified {
		e.rules = append(e.rules, &prule{toolName: "*", hasToolName: true, decision: "allow", priority: tierDefault + 0.998, modes: []string{"yolo"}, ref: yolo})
	} else {
		e.rules = append(e.rules, &prule{decision: "allow", priority: tierDefault + 0.999, modes: []string{"yolo"}, ref: yolo})
	}
	sort.SliceStable(e.rules, func(i, j int) bool { return e.rules[i].priority > e.rules[j].priority })
}

func bareToolName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isBareKey(s[i]) {
			return false
		}
	}
	return s != ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// qualify is the tool name a rule with mcpName has in the release's engine: "<mcpName>__<tool>"
// (PolicyComposite) or formatMcpToolName: "mcp_<mcpName>_<tool>", "*" kept as a wildcard.
func (e *evaluation) qualify(mcpName, tool string) string {
	if e.feat.Policy == PolicyQualified {
		if tool == "*" {
			return "mcp_" + mcpName + "_*"
		}
		return "mcp_" + mcpName + "_" + tool
	}
	return mcpName + "__" + tool
}

// serverWildcard is the release's wildcard of every tool of a server.
func (e *evaluation) serverWildcard(server string) string { return e.qualify(server, "*") }

// register registers every tool: server filters, then the name the release declares.
func (e *evaluation) register() {
	taken := map[string]int{} // declared name → index in regs
	for _, t := range e.c.Tools {
		r := &reg{t: t}
		e.regs = append(e.regs, r)
		for _, x := range e.mcpExcluded {
			if x.Entry.Value == t.Server {
				r.hiddenBy, r.why = x, fmt.Sprintf("mcp.excluded lists server %q: its tools are off", t.Server)
			}
		}
		if sc := e.servers[t.Server]; sc != nil && r.hiddenBy == nil {
			for _, x := range sc.exc {
				if x.Entry.Value == t.Name {
					r.hiddenBy, r.why = x, fmt.Sprintf("mcpServers[%q].excludeTools lists %q (raw names, the same in every release)", t.Server, t.Name)
					break
				}
			}
			if r.hiddenBy == nil && sc.s.HasInclude && !slices.ContainsFunc(sc.inc, func(x *RuleRef) bool {
				return x.Entry.Value == t.Name || strings.HasPrefix(x.Entry.Value, t.Name+"(")
			}) {
				r.hiddenBy = &RuleRef{ID: fmt.Sprintf("%s#mcpServers[%q].includeTools", sc.file, t.Server), Kind: KindServerInclude, Scope: sc.scope,
					Pos: sc.s.Pos, Text: fmt.Sprintf("mcpServers[%q].includeTools", t.Server), Decision: "hide"}
				r.why = fmt.Sprintf("mcpServers[%q].includeTools does not list %q", t.Server, t.Name)
			}
		}
		if r.hiddenBy != nil {
			continue
		}
		if e.feat.Naming >= mcpname.GeminiEraQualified {
			r.name = mcpname.GeminiName(t.Server, t.Name)
			if j, ok := taken[r.name]; ok {
				// The later registration overwrites the earlier ("… is already registered.
				// Overwriting."): the earlier tool cannot be reached.
				prev := e.regs[j]
				prev.hiddenBy = &RuleRef{ID: "default#shadow", Kind: KindDefault, Text: "registered under the same name", Decision: "hide"}
				prev.why = fmt.Sprintf("%s/%s is also declared as %s and was registered after it: Gemini CLI %s declares the name once, for the last one", t.Server, t.Name, r.name, e.c.Release)
			}
		} else {
			r.name = mcpname.GeminiBareName(e.feat.Naming, t.Server, t.Name)
			if _, ok := taken[r.name]; ok {
				r.name = mcpname.GeminiCollisionName(e.feat.Naming, t.Server, t.Name)
			}
		}
		taken[r.name] = len(e.regs) - 1
	}
}

// possibleNames are the names tools.exclude and the hiding policies are compared with
// (tool-registry.ts isActiveTool): the declared name, the class name, and the name without its
// server prefix (or with it, for a bare name).
func (e *evaluation) possibleNames(r *reg) []string {
	out := []string{r.name, mcpClassName}
	if e.feat.Naming >= mcpname.GeminiEraQualified {
		if p := mcpname.GeminiServerPrefix(r.t.Server); strings.HasPrefix(r.name, p) {
			out = append(out, r.name[len(p):])
		} else {
			out = append(out, p+r.name)
		}
		return out
	}
	if p := r.t.Server + "__"; strings.HasPrefix(r.name, p) {
		out = append(out, r.name[len(p):])
	} else {
		out = append(out, p+r.name)
	}
	return out
}

// callNames are the names a call is matched under in a PolicyComposite engine.
func (e *evaluation) callNames(r *reg) []string {
	if strings.Contains(r.name, "__") {
		return []string{r.name}
	}
	return []string{r.name, r.t.Server + "__" + r.name}
}

// modeOK reports whether a rule applies in the run's mode and interactivity.
func (e *evaluation) modeOK(p *prule) bool {
	if len(p.modes) > 0 && !slices.Contains(p.modes, e.c.Mode.policyMode()) {
		return false
	}
	if p.interactive != nil && *p.interactive != e.c.Interactive {
		return false
	}
	return p.subagent == "" // rules for a subagent do not decide the main agent's calls
}

// matches reports whether the engine's rule p matches tool r's call (args and annotations
// aside: the caller decides what those rules mean).
func (e *evaluation) matches(p *prule, r *reg) bool {
	if e.feat.Policy == PolicyQualified {
		return e.matchQualified(p, r.name, r.t.Server)
	}
	if !p.hasToolName {
		return true
	}
	for _, n := range e.callNames(r) {
		if e.matchComposite(p.toolName, n, r.t.Server) {
			return true
		}
	}
	return false
}

// matchComposite is 0.32.1's ruleMatches on the tool name (policy-engine.ts matchesWildcard,
// matchesCompositePattern).
func (e *evaluation) matchComposite(pattern, name, server string) bool {
	switch {
	case pattern == "*":
		return true
	case !strings.Contains(pattern, "*"):
		return name == pattern
	case e.feat.CompositeWildcards && strings.Contains(pattern, "__"):
		parts := strings.Split(pattern, "__")
		if len(parts) != 2 || !strings.HasPrefix(name, server+"__") {
			return false
		}
		tool := name[strings.Index(name, "__")+2:]
		return (parts[0] == "*" || parts[0] == server) && (parts[1] == "*" || parts[1] == tool)
	case strings.HasSuffix(pattern, "__*"):
		prefix := strings.TrimSuffix(pattern, "__*")
		return prefix == server && strings.HasPrefix(name, prefix+"__")
	}
	return name == pattern
}

// matchQualified is 0.61.0's ruleMatches on mcpName and the tool name (policy-engine.ts).
func (e *evaluation) matchQualified(p *prule, name, server string) bool {
	if p.hasMCPName {
		if p.mcpName == "*" {
			if server == "" {
				return false
			}
		} else if server != p.mcpName {
			return false
		}
	}
	if !p.hasToolName || p.toolName == "*" {
		return true
	}
	if strings.Contains(p.toolName, "*") {
		switch {
		case p.toolName == "mcp_*":
			return server != ""
		case strings.HasPrefix(p.toolName, "mcp_") && strings.HasSuffix(p.toolName, "_*"):
			want := p.toolName[len("mcp_") : len(p.toolName)-2]
			return server == want && strings.HasPrefix(name, "mcp_"+want+"_")
		}
		return name == p.toolName
	}
	if name == p.toolName {
		return true
	}
	if server != "" && name != "" {
		isMcp := strings.HasPrefix(p.toolName, "mcp_")
		if p.hasMCPName && !isMcp && name == "mcp_"+p.mcpName+"_"+p.toolName {
			return true
		}
		if isMcp && p.toolName == "mcp_"+server+"_"+name {
			return true
		}
	}
	return false
}

// decide gives every tool its outcome.
func (e *evaluation) decide() {
	excludedLiterals := e.compositeExclusions()
	for _, r := range e.regs {
		v := Verdict{Tool: r.t, Name: r.name}
		switch {
		case r.hiddenBy != nil:
			v.Name = ""
			if r.hiddenBy.ID == "default#shadow" {
				v.Name = r.name
			}
			v.Outcome, v.By, v.Why = Hidden, r.hiddenBy, r.why
		default:
			e.outcome(r, &v, excludedLiterals)
		}
		v.Matches = e.matching(r)
		e.res.Tools = append(e.res.Tools, v)
	}
}

// outcome decides a registered tool (hidden by an exclusion, else the call's decision).
func (e *evaluation) outcome(r *reg, v *Verdict, excludedLiterals map[string]*RuleRef) {
	names := e.possibleNames(r)
	// tools.exclude (and a migrated v1 excludeTools) against the tool's names.
	if e.feat.ExcludeHidesMCP {
		for _, x := range append(slices.Clone(e.exclude), e.legacy...) {
			if slices.Contains(names, x.Entry.Value) {
				v.Outcome, v.By = Hidden, x
				v.Why = fmt.Sprintf("%s %q is one of the names Gemini CLI %s compares with the tool's (%s)", x.Kind, x.Entry.Value, e.c.Release, strings.Join(names, ", "))
				return
			}
		}
	}
	// Policies that hide (0.30.0 on).
	if e.feat.PolicyHides {
		if e.feat.Policy == PolicyComposite {
			for _, n := range names {
				if ref := excludedLiterals[n]; ref != nil {
					v.Outcome, v.By = Hidden, ref
					v.Why = fmt.Sprintf("the deny rule %s names %q, one of the tool's names: Gemini CLI %s does not declare it", ref.Text, n, e.c.Release)
					return
				}
			}
		} else if p, found := e.firstExcluding(r); found {
			if p == nil {
				v.Outcome = Hidden
				v.Why = fmt.Sprintf("no rule allows it and a headless run refuses by default: Gemini CLI %s does not declare it", e.c.Release)
				return
			}
			if p.decision == "deny" {
				v.Outcome, v.By = Hidden, p.ref
				v.Why = fmt.Sprintf("%s denies it: Gemini CLI %s does not declare it", p.ref.Text, e.c.Release)
				return
			}
		}
	}
	// The call.
	if e.feat.Policy == PolicyNone {
		switch {
		case e.c.Mode == ModeYolo:
			v.Outcome, v.Why = Ran, "yolo mode runs every tool"
		case e.allowedNames(r) != nil:
			v.Outcome, v.By = Ran, e.allowedNames(r)
			v.Why = fmt.Sprintf("tools.allowed names it: no confirmation (Gemini CLI %s has no policy engine for tool calls)", e.c.Release)
		case e.servers[r.t.Server] != nil && e.servers[r.t.Server].trust != nil:
			v.Outcome, v.By, v.Why = Ran, e.servers[r.t.Server].trust, "a trusted server's tools run without confirmation"
		default:
			v.Outcome = Ask
			v.Why = "each call asks for confirmation"
			if !e.c.Interactive {
				v.Why += fmt.Sprintf(" (headless, Gemini CLI %s waits for an answer that never comes: the recording's run hung)", e.c.Release)
			}
		}
		return
	}
	for _, p := range e.rules {
		if !e.modeOK(p) || !e.matches(p, r) {
			continue
		}
		if p.argsDep {
			v.ArgsDependent = append(v.ArgsDependent, p.ref)
			continue
		}
		if p.annotations {
			continue // the server's annotations are not known here
		}
		v.By = p.ref
		switch p.decision {
		case "allow":
			v.Outcome, v.Why = Ran, fmt.Sprintf("%s allows it", p.ref.Text)
		case "deny":
			v.Outcome, v.Why = Denied, fmt.Sprintf("%s denies it: declared, each call refused", p.ref.Text)
		default:
			if e.c.Interactive {
				v.Outcome, v.Why = Ask, fmt.Sprintf("%s asks for confirmation", p.ref.Text)
			} else {
				v.Outcome, v.Why = Denied, fmt.Sprintf("%s asks for confirmation, which a headless run refuses", p.ref.Text)
			}
		}
		return
	}
	switch {
	case e.c.Mode == ModeYolo:
		v.Outcome, v.Why = Ran, "yolo mode runs every tool no rule decides"
	case e.c.Interactive:
		v.Outcome, v.Why = Ask, "no rule decides it: each call asks for confirmation"
	default:
		v.Outcome, v.Why = Denied, "no rule decides it and a headless run refuses what it would ask"
	}
}

// allowedNames is the tools.allowed entry naming the tool's declared name or class, as the
// releases before the policy engine compared them (tool-utils.ts doesToolInvocationMatch).
func (e *evaluation) allowedNames(r *reg) *RuleRef {
	for _, x := range e.allowed {
		n := x.Entry.Value
		if open := strings.IndexByte(n, '('); open >= 0 {
			n = n[:open]
		}
		if n == r.name || n == mcpClassName {
			return x
		}
	}
	return nil
}

// firstExcluding is 0.61.0's getExcludedTools for one tool: the first rule (priority order)
// that applies to it without arguments; found false when an argument-dependent non-deny rule
// comes first (never excluded), p nil when no rule applies and the default refuses.
func (e *evaluation) firstExcluding(r *reg) (p *prule, found bool) {
	for _, q := range e.rules {
		if !e.modeOK(q) || q.annotations || !e.matchQualified(q, r.name, r.t.Server) {
			continue
		}
		if q.argsDep {
			if q.decision != "deny" {
				return nil, false
			}
			continue
		}
		return q, true
	}
	if e.feat.DefaultDenyHides && !e.c.Interactive && e.c.Mode != ModeYolo {
		return nil, true
	}
	return nil, false
}

// compositeExclusions is 0.32.1's getExcludedTools: the literal tool names its deny rules hide
// (processed in priority order, a global rule's verdict applying to the rest; a tool name a
// higher wildcard rule covered keeps that rule's verdict), by name.
func (e *evaluation) compositeExclusions() map[string]*RuleRef {
	out := map[string]*RuleRef{}
	if e.feat.Policy != PolicyComposite || !e.feat.PolicyHides {
		return out
	}
	processed := map[string]bool{}
	var wild []string
	var global *prule
	for _, p := range e.rules {
		if p.argsDep {
			if p.hasToolName && p.decision != "deny" {
				processed[p.toolName] = true
			}
			continue
		}
		if len(p.modes) > 0 && !slices.Contains(p.modes, e.c.Mode.policyMode()) {
			continue
		}
		if p.annotations {
			continue
		}
		if !p.hasToolName {
			if global == nil {
				global = p
				if p.decision != "deny" {
					break
				}
			}
			continue
		}
		name := p.toolName
		if processed[name] {
			continue
		}
		covered := false
		for _, w := range wild {
			if e.matchComposite(w, name, "") {
				if out[w] != nil {
					out[name] = out[w]
				}
				covered = true
				break
			}
		}
		if covered {
			continue
		}
		processed[name] = true
		if strings.Contains(name, "*") {
			wild = append(wild, name)
		}
		decision, ref := p.decision, p.ref
		if global != nil {
			decision, ref = global.decision, global.ref
		}
		if decision == "deny" {
			out[name] = ref
		}
	}
	if global != nil && global.decision == "deny" {
		for _, r := range e.regs {
			if r.hiddenBy == nil && !processed[r.name] {
				out[r.name] = global.ref
			}
		}
	}
	return out
}

// matching lists the input rules that apply to a tool in this release (deciding or not).
func (e *evaluation) matching(r *reg) []*RuleRef {
	var out []*RuleRef
	add := func(x *RuleRef) {
		if x != nil && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	for _, x := range e.mcpExcluded {
		if x.Entry.Value == r.t.Server {
			add(x)
		}
	}
	if sc := e.servers[r.t.Server]; sc != nil {
		for _, x := range sc.exc {
			if x.Entry.Value == r.t.Name {
				add(x)
			}
		}
		for _, x := range sc.inc {
			if x.Entry.Value == r.t.Name || strings.HasPrefix(x.Entry.Value, r.t.Name+"(") {
				add(x)
			}
		}
	}
	if r.name == "" {
		return out
	}
	names := e.possibleNames(r)
	if e.feat.ExcludeHidesMCP {
		for _, x := range append(slices.Clone(e.exclude), e.legacy...) {
			if slices.Contains(names, x.Entry.Value) {
				add(x)
			}
		}
	}
	if e.feat.Policy == PolicyNone {
		if x := e.allowedNames(r); x != nil {
			add(x)
		}
		return out
	}
	for _, p := range e.rules {
		if p.ref.Kind == KindDefault || strings.HasSuffix(p.ref.ID, "/enforcement") {
			continue
		}
		if !e.modeOK(p) {
			continue
		}
		if e.matches(p, r) {
			add(p.ref)
			continue
		}
		if e.feat.Policy == PolicyComposite && e.feat.PolicyHides && p.hasToolName && p.decision == "deny" && slices.Contains(names, p.toolName) {
			add(p.ref) // hides the tool by one of its names
		}
	}
	return out
}

// ruleResults lists every input rule with the tools it matches.
func (e *evaluation) ruleResults() {
	byRef := map[*RuleRef][]Tool{}
	for _, v := range e.res.Tools {
		for _, m := range v.Matches {
			byRef[m] = append(byRef[m], v.Tool)
		}
	}
	for _, ref := range e.refs {
		rr := &RuleResult{Ref: ref, Matches: byRef[ref], Ignored: e.ignored[ref.ID]}
		if rr.Ignored == "" && e.feat.Policy == PolicyNone && (ref.Kind == KindExclude || ref.Kind == KindLegacyExclude) && !e.feat.ExcludeHidesMCP {
			rr.Ignored = fmt.Sprintf("Gemini CLI %s compares tools.exclude with built-in tools only (MCP tools from 0.15.0 on)", e.c.Release)
		}
		if rr.Ignored == "" && e.feat.Policy == PolicyNone && ref.Kind == KindCore {
			rr.Ignored = fmt.Sprintf("Gemini CLI %s applies tools.core to built-in tools only (MCP tools from 0.40.0 on)", e.c.Release)
		}
		if rr.Ignored == "" && ref.Kind == KindCore && !e.feat.CoreRestrictsMCP {
			rr.Ignored = fmt.Sprintf("Gemini CLI %s applies tools.core to built-in tools only (MCP tools from 0.40.0 on)", e.c.Release)
		}
		e.res.Rules = append(e.res.Rules, rr)
	}
}

// bareExcludes flags each tools.exclude entry that hides tools of two or more servers.
func (e *evaluation) bareExcludes() {
	for _, rr := range e.res.Rules {
		if rr.Ref.Kind != KindExclude && rr.Ref.Kind != KindLegacyExclude || rr.Ignored != "" {
			continue
		}
		var hidden []Tool
		servers := map[string]bool{}
		for _, t := range rr.Matches {
			if v := e.res.Verdict(t); v != nil && v.Outcome == Hidden && v.By == rr.Ref {
				hidden = append(hidden, t)
				servers[t.Server] = true
			}
		}
		if len(servers) > 1 {
			var ts []string
			for _, t := range hidden {
				ts = append(ts, t.String())
			}
			e.res.Findings = append(e.res.Findings, Finding{Kind: FindingBareExclude, Pos: rr.Ref.Pos, Rule: rr.Ref, Tools: hidden,
				Message: fmt.Sprintf("%s hides tools of %d servers (%s): Gemini CLI %s compares it with every tool's name without its server prefix", rr.Ref.Text, len(servers), strings.Join(ts, ", "), e.c.Release)})
		}
	}
}
