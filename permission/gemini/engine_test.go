package gemini

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpname"
)

func TestFeaturesBoundaries(t *testing.T) {
	f := func(v string) Features { return FeaturesOf(MustRelease(v)) }
	assert.Equal(t, PolicyNone, f("0.22.4").Policy)
	assert.Equal(t, PolicyComposite, f("0.24.0").Policy)
	assert.Equal(t, PolicyComposite, f("0.32.1").Policy)
	assert.Equal(t, PolicyQualified, f("0.33.0").Policy)
	assert.False(t, f("0.14.0").ExcludeHidesMCP)
	assert.True(t, f("0.15.1").ExcludeHidesMCP)
	assert.True(t, f("0.22.4").MigratesLegacyExclude)
	assert.False(t, f("0.24.0").MigratesLegacyExclude)
	assert.False(t, f("0.25.2").CompositeWildcards)
	assert.True(t, f("0.26.0").CompositeWildcards)
	assert.False(t, f("0.33.0").CompositeWildcards)
	assert.False(t, f("0.29.0").PolicyHides)
	assert.True(t, f("0.30.0").PolicyHides)
	assert.False(t, f("0.32.1").DefaultDenyHides)
	assert.True(t, f("0.33.2").DefaultDenyHides)
	assert.False(t, f("0.30.1").WorkspacePolicies)
	assert.True(t, f("0.31.0").WorkspacePolicies)
	assert.False(t, f("0.32.1").WarnsDoubleUnderscore)
	assert.True(t, f("0.33.0").WarnsDoubleUnderscore)
	assert.False(t, f("0.35.3").ToolNameRequired)
	assert.True(t, f("0.36.0").ToolNameRequired)
	assert.False(t, f("0.36.0").CoreRestrictsMCP)
	assert.True(t, f("0.40.0").CoreRestrictsMCP)
	assert.Equal(t, mcpname.GeminiEraBareSanitized, f("0.32.1").Naming)
	_, err := ParseRelease("latest")
	assert.ErrorIs(t, err, mcpname.ErrGeminiVersion)
	_, err = ParseMode("autoEdit")
	assert.Error(t, err)
	m, err := ParseMode("auto_edit")
	require.NoError(t, err)
	assert.Equal(t, "autoEdit", m.policyMode())
}

func settingsOf(t *testing.T, text string) *SettingsFile {
	t.Helper()
	sf, err := ParseSettings("settings.json", []byte(text), ScopeUser)
	require.NoError(t, err)
	return sf
}

func TestParseSettingsPositions(t *testing.T) {
	text := "{\n  // tools\n  \"tools\": {\"exclude\": [\"a\", /* b */ \"b\\u002ec\", 3],\n    \"allowed\": []},\n  \"mcpServers\": {\"s\": {\"excludeTools\": [\"x\"], \"includeTools\": [\"y(z)\"], \"trust\": true, \"env\": {\"K\": \"secret\"}}}\n}\n"
	sf := settingsOf(t, text)
	require.Len(t, sf.Exclude, 2)
	assert.Equal(t, "b.c", sf.Exclude[1].Value)
	assert.Equal(t, Pos{"settings.json", 3, 38}, sf.Exclude[1].Pos)
	assert.Equal(t, `"b\u002ec"`, text[sf.Exclude[1].Start:sf.Exclude[1].End])
	assert.Equal(t, 1, sf.Exclude[1].Index)
	assert.True(t, sf.HasAllowed)
	assert.Empty(t, sf.Allowed)
	require.Len(t, sf.Warnings, 1)
	assert.Contains(t, sf.Warnings[0], "settings.json:3:50: tools.exclude[2] is not a string")
	require.Len(t, sf.Servers, 1)
	assert.True(t, sf.Servers[0].Trust)
	assert.Equal(t, "y(z)", sf.Servers[0].Include[0].Value)
	assert.Equal(t, `mcpServers["s"].excludeTools`, sf.Servers[0].Exclude[0].Key)

	for _, c := range []struct{ text, want string }{
		{"{\"tools\": {\"exclude\": [\"a\",]}}", "settings.json:1:27: trailing comma"},
		{"{\"tools\": {\"exclude\": [\"secret-value\" \"b\"]}}", "settings.json:1:39: not valid JSON"},
		{"[]", "settings.json:1:1: settings file is not a JSON object"},
		{"\xEF\xBB\xBF{}", "settings.json:1:1: file starts with a UTF-8 byte order mark"},
	} {
		_, err := ParseSettings("settings.json", []byte(c.text), ScopeUser)
		require.Error(t, err, c.text)
		assert.Contains(t, err.Error(), c.want)
		assert.NotContains(t, err.Error(), "secret", "a settings file's text never reaches a message")
	}
}

func TestParsePolicyPositionsAndSchema(t *testing.T) {
	text := "# user rules\n[[rule]]\ntoolName = \"foo.bar__wipe\"\ndecision = \"deny\"\npriority = 500\n\n[[rule]]\nmcpName = \"lit\"\ndecision = \"deny\"\npriority = 10\n"
	f := ParsePolicy("p.toml", []byte(text), ScopeUser)
	require.Nil(t, f.SyntaxError)
	require.False(t, f.NoPositions)
	require.Len(t, f.Rules, 2)
	assert.Equal(t, Pos{"p.toml", 2, 1}, f.Rules[0].Pos)
	assert.Equal(t, Pos{"p.toml", 3, 12}, f.Rules[0].ToolNames[0].Pos)
	assert.Equal(t, `"foo.bar__wipe"`, text[f.Rules[0].ToolNames[0].Start:f.Rules[0].ToolNames[0].End])
	assert.Equal(t, `mcpName = "lit", (no toolName)`, f.Rules[1].Text())

	// 0.32.1: a rule without toolName is every tool of its mcpName; the "__" spelling is quiet.
	c := f.Check(MustRelease("0.32.1"))
	assert.False(t, c.Rejected)
	assert.Empty(t, c.Warnings)
	// 0.61.0: toolName is required: the whole file is dropped, the valid first rule too.
	c = f.Check(Latest)
	assert.True(t, c.Rejected)
	assert.Equal(t, `Schema validation failed: rule #2, field "toolName": required; Gemini CLI 0.61.0 drops every rule of the file`, c.Reason)
	assert.Equal(t, Pos{"p.toml", 7, 1}, c.Pos)
	assert.Len(t, c.Dropped, 2)

	tools := []Tool{{"foo.bar", "wipe"}, {"lit", "fetch"}}
	old := Evaluate(Config{Release: MustRelease("0.32.1"), Mode: ModeYolo, Policies: []*PolicyFile{f}, Tools: tools})
	now := Evaluate(Config{Release: Latest, Mode: ModeYolo, Policies: []*PolicyFile{f}, Tools: tools})
	assert.Equal(t, Denied, old.Verdict(Tool{"lit", "fetch"}).Outcome, "0.32.1: mcpName alone denies every tool of lit (lit__*: declared, refused)")
	assert.Equal(t, Ran, now.Verdict(Tool{"lit", "fetch"}).Outcome)
	var rejected *Finding
	for i := range now.Findings {
		if now.Findings[i].Kind == FindingRejectedFile {
			rejected = &now.Findings[i]
		}
	}
	require.NotNil(t, rejected)
	assert.Len(t, rejected.Dropped, 2)
	assert.Contains(t, now.Rule("p.toml#rule[0]").Ignored, "the file is rejected")
	changes := Compare(old, now)
	assert.Equal(t, Lost, changes[0].Kind)
	assert.Equal(t, Lost, changes[1].Kind)

	// Every release rejects a rule without priority, a bad decision, an unknown mode.
	for _, bad := range []string{
		"[[rule]]\ntoolName = \"x\"\ndecision = \"deny\"\n",
		"[[rule]]\ntoolName = \"x\"\ndecision = \"block\"\npriority = 1\n",
		"[[rule]]\ntoolName = \"x\"\ndecision = \"deny\"\npriority = 1\nmodes = [\"auto_edit\"]\n",
		"[[rule]]\ntoolName = \"x\"\ndecision = \"deny\"\npriority = 1000\n",
	} {
		for _, r := range []string{"0.24.0", "0.32.1", "0.61.0"} {
			assert.True(t, ParsePolicy("b.toml", []byte(bad), ScopeUser).Check(MustRelease(r)).Rejected, "%s: %q", r, bad)
		}
	}
	// A TOML syntax error drops the file, at the error's place, without quoting it.
	s := ParsePolicy("s.toml", []byte("[[rule]]\ntoolName = \"secret\ndecision = \"deny\"\n"), ScopeUser)
	require.NotNil(t, s.SyntaxError)
	assert.Equal(t, 2, s.SyntaxError.Line)
	assert.NotContains(t, s.SyntaxError.Error(), "secret")
	assert.True(t, s.Check(Latest).Rejected)
	// Before 0.24.0 policies decide no tool call; workspace policies from 0.31.0.
	assert.True(t, f.Check(MustRelease("0.20.0")).Ignored)
	w := ParsePolicy("w.toml", []byte(text), ScopeWorkspace)
	assert.True(t, w.Check(MustRelease("0.30.0")).Ignored)
}

// TestDeprecationWarnings: 0.33.0 and later warn for each "__" toolName of a policy file at its
// value, and load the rule; 0.32.1 does not. From 0.30.0 a non-empty tools.exclude or
// tools.allowed gets the start-up warning that the list "is deprecated and will be removed in
// 1.0" (gemini.tsx of @google/gemini-cli 0.30.0 to 0.61.0; 0.29.0 has none; the real 0.61.0
// printed it beside the recording's deny rules): a finding at each entry, with no "__" warning.
func TestDeprecationWarnings(t *testing.T) {
	c := caseConfig(t, rulesDir+"deny")
	c.Mode = ModeYolo
	c.Release = Latest
	deprecations := func(c Config) (policy, lists []string) {
		for _, f := range Evaluate(c).Findings {
			if f.Kind != FindingDeprecated {
				continue
			}
			if f.Rule.Kind == KindPolicy {
				policy = append(policy, f.Pos.String())
				assert.Contains(t, f.Message, `The "__" syntax for MCP tools is strictly deprecated`)
				continue
			}
			lists = append(lists, f.Rule.Entry.Value)
			assert.Equal(t, f.Rule.Pos, f.Pos)
			assert.Contains(t, f.Message, string(f.Rule.Kind)+" in settings.json is deprecated and will be removed in 1.0", f.Rule.Text)
			assert.Contains(t, f.Message, "Gemini CLI "+c.Release.String()+" warns")
		}
		return policy, lists
	}
	policy, lists := deprecations(c)
	assert.Equal(t, []string{
		rulesDir + "deny/policies/d1-g1-qualified.toml:2:12",
		rulesDir + "deny/policies/d4-g1-wildcard.toml:2:12",
		rulesDir + "deny/policies/d5-mixed.toml:2:12",
	}, policy)
	assert.Equal(t, []string{"deploy.prod", "foo.bar__purge", "mcp_foo.bar_rotate"}, lists)
	c.Release = MustRelease("0.32.1")
	policy, lists = deprecations(c)
	assert.Empty(t, policy)
	assert.Equal(t, []string{"deploy.prod", "foo.bar__purge", "mcp_foo.bar_rotate"}, lists)
	c.Release = MustRelease("0.29.0")
	policy, lists = deprecations(c)
	assert.Empty(t, policy)
	assert.Empty(t, lists)
	a := caseConfig(t, rulesDir+"allow")
	a.Release = Latest
	_, lists = deprecations(a)
	assert.Equal(t, []string{"deploy.prod", "foo.bar__purge", "mcp_foo.bar_rotate"}, lists, "tools.allowed")
}

// TestConfirmationRequired: tools.confirmationRequired (read from 0.39.1; 0.39.0 has no such
// setting) makes an ask rule at priority user+0.35, above tools.allowed and the yolo
// allow-all: the tool stays declared and each call asks, which a headless run refuses. The
// real 0.61.0 (npm), --yolo, headless, with "confirmationRequired": ["mcp_foo.bar_deploy.prod"]
// declared the tool and answered its call 'Tool execution for "deploy.prod (foo.bar MCP
// Server)" requires user confirmation, which is not supported in non-interactive mode.'; the
// server's other tool ran.
func TestConfirmationRequired(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "settings.json", `{"tools": {"confirmationRequired": ["mcp_foo.bar_deploy.prod"], "allowed": ["mcp_foo.bar_deploy.prod"]}}`)
	sf, err := ParseSettings(p, readFile(t, p), ScopeUser)
	require.NoError(t, err)
	require.Len(t, sf.Confirm, 1)
	assert.Equal(t, Pos{p, 1, 37}, sf.Confirm[0].Pos)
	tools := []Tool{{"foo.bar", "deploy.prod"}, {"foo.bar", "keep"}}
	c := Config{Release: Latest, Mode: ModeYolo, Settings: []*SettingsFile{sf}, Tools: tools}
	res := Evaluate(c)
	v := res.Verdict(tools[0])
	assert.Equal(t, Denied, v.Outcome, v.Why)
	require.NotNil(t, v.By)
	assert.Equal(t, KindConfirm, v.By.Kind)
	assert.Contains(t, v.Why, "asks for confirmation, which a headless run refuses")
	assert.Equal(t, Ran, res.Verdict(tools[1]).Outcome)
	c.Interactive = true
	assert.Equal(t, Ask, Evaluate(c).Verdict(tools[0]).Outcome)
	c.Interactive, c.Release = false, MustRelease("0.39.0")
	res = Evaluate(c)
	assert.Equal(t, Ran, res.Verdict(tools[0]).Outcome)
	rr := res.Rule(p + "#tools.confirmationRequired[0]")
	require.NotNil(t, rr)
	assert.Contains(t, rr.Ignored, "0.39.1")
}

// TestBareExcludeHitsSeveralServers: rules/gain: tools.exclude "get_data" hides lit/get+data,
// foo.bar/get_data and foo_bar/get_data, "search" two servers' search, in 0.32.1 and 0.61.0.
func TestBareExcludeHitsSeveralServers(t *testing.T) {
	for _, r := range []string{"0.32.1", "0.61.0"} {
		c := caseConfig(t, rulesDir+"gain")
		c.Release, c.Mode = MustRelease(r), ModeYolo
		res := Evaluate(c)
		got := map[string][]Tool{}
		for _, f := range res.Findings {
			if f.Kind == FindingBareExclude {
				got[f.Rule.Entry.Value] = f.Tools
				assert.Contains(t, f.Message, "hides tools of")
			}
		}
		assert.Equal(t, map[string][]Tool{
			"get_data": {{"lit", "get+data"}, {"foo.bar", "get_data"}, {"foo_bar", "get_data"}},
			"search":   {{"lit", "search"}, {"foo.bar", "search"}},
		}, got, r)
	}
}

// TestCompareLostFirst: the deny rules of the recording from 0.32.1 to 0.61.0: the four tools
// whose deny stopped denying come first, then the two a 0.61.0 spelling now hides.
func TestCompareLostFirst(t *testing.T) {
	c := caseConfig(t, rulesDir+"deny")
	c.Mode = ModeYolo
	c.Release = MustRelease("0.32.1")
	old := Evaluate(c)
	c.Release = Latest
	changes := Compare(old, Evaluate(c))
	var kinds []string
	for _, ch := range changes[:7] {
		kinds = append(kinds, string(ch.Kind)+" "+ch.Tool.String())
	}
	assert.Equal(t, []string{
		"lost foo.bar/purge", "lost foo.bar/wipe", "lost lit/literature.search_pubmed",
		"lost acme/a1", "lost acme/a2",
		"gained foo.bar/get+data", "gained foo.bar/rotate",
	}, kinds)
	assert.Equal(t, 5, Count(changes, Lost))
}

// TestInteractiveAndCore: interactive runs ask where headless ones refuse; tools.core restricts
// MCP tools from 0.40.0; a shared 0.61.0 name hides the tool registered first.
func TestInteractiveAndCore(t *testing.T) {
	tools := []Tool{{"lit", "fetch"}, {"lit", "ok_tool"}, {"foo_bar", "get_data"}, {"foo bar", "get_data"}}
	res := Evaluate(Config{Release: Latest, Mode: ModeDefault, Interactive: true, Tools: tools})
	assert.Equal(t, Ask, res.Verdict(Tool{"lit", "fetch"}).Outcome)
	assert.Equal(t, Hidden, res.Verdict(Tool{"foo_bar", "get_data"}).Outcome)
	assert.Contains(t, res.Verdict(Tool{"foo_bar", "get_data"}).Why, "declares the name once, for the last one")
	assert.Equal(t, Ask, res.Verdict(Tool{"foo bar", "get_data"}).Outcome)
	res = Evaluate(Config{Release: MustRelease("0.10.0"), Mode: ModeDefault, Tools: tools})
	assert.Equal(t, Ask, res.Verdict(Tool{"lit", "fetch"}).Outcome)

	sf := settingsOf(t, `{"tools": {"core": ["mcp_lit_ok_tool"]}}`)
	res = Evaluate(Config{Release: Latest, Mode: ModeYolo, Settings: []*SettingsFile{sf}, Tools: tools})
	assert.Equal(t, Ran, res.Verdict(Tool{"lit", "ok_tool"}).Outcome)
	assert.Equal(t, Hidden, res.Verdict(Tool{"lit", "fetch"}).Outcome)
	res = Evaluate(Config{Release: MustRelease("0.36.0"), Mode: ModeYolo, Settings: []*SettingsFile{sf}, Tools: tools})
	assert.Equal(t, Ran, res.Verdict(Tool{"lit", "fetch"}).Outcome)
	assert.Contains(t, res.Rule("settings.json#tools.core[0]").Ignored, "built-in tools only")
}
