package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	fixtureUser      = "../../../fixtures/qwen-settings/settings.json"
	fixtureWorkspace = "../../../fixtures/qwen-settings/workspace/.qwen/settings.json"
	fixtureAgent     = "../../../fixtures/qwen-settings/workspace/.qwen/agents/verifier.md"
	fixtureRealUser  = "../../../fixtures/qwen-real/dot-qwen/settings.json"
)

func loadFixture(t testing.TB, path string, scope Scope, env Env) (*File, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := Parse(path, data, scope, env)
	require.NoError(t, err)
	return f, data
}

// assertTokens checks that every rule's [Offset, End) is the JSON string token of its literal
// and that Line/Column agree with Offset.
func assertTokens(t testing.TB, data []byte, rules []Rule) {
	t.Helper()
	for _, r := range rules {
		var got string
		require.NoError(t, json.Unmarshal(data[r.Offset:r.End], &got), "token of %v", r)
		assert.Equal(t, r.Literal, got, "token of %v", r)
		before := data[:r.Offset]
		line := bytes.Count(before, []byte("\n")) + 1
		col := len(before) - (bytes.LastIndexByte(before, '\n') + 1) + 1
		assert.Equal(t, [2]int{line, col}, [2]int{r.Line, r.Column}, "position of %v", r)
	}
}

type ruleRow struct {
	key     string
	index   int
	kind    Kind
	literal string
	line    int
	col     int
}

func rows(rules []Rule) []ruleRow {
	var out []ruleRow
	for _, r := range rules {
		out = append(out, ruleRow{r.Key, r.Index, r.Kind, r.Literal, r.Line, r.Column})
	}
	return out
}

func TestLoadUserFixture(t *testing.T) {
	f, data := loadFixture(t, fixtureUser, ScopeUser, nil)

	assert.Equal(t, 4, f.Version)
	assert.True(t, f.HasVersion)
	assert.False(t, f.V1)
	assert.Empty(t, f.Warnings)
	assert.Equal(t, []ruleRow{
		{`mcpServers."foo.bar".excludeTools`, 0, KindExcludeTools, "deploy.prod", 11, 24},
		{`mcpServers."com.example.enterprise-search".includeTools`, 0, KindIncludeTools, "query_documents_by_semantic_similarity", 14, 77},
		{`mcpServers."com.example.enterprise-search".includeTools`, 1, KindIncludeTools, "list", 14, 119},
		{"permissions.allow", 0, KindAllow, "mcp__lit__literature.search_pubmed", 19, 7},
		{"permissions.allow", 1, KindAllow, "mcp__foo.bar", 20, 7},
		{"permissions.allow", 2, KindAllow, "mcp__com.example.enterprise-___documents_by_semantic_similarity", 21, 7},
		{"permissions.allow", 3, KindAllow, "Read", 22, 7},
		{"permissions.ask", 0, KindAsk, "mcp__foo_bar__*", 24, 13},
		{"permissions.deny", 0, KindDeny, "mcp__foo.bar__deploy.prod", 26, 7},
		{"permissions.deny", 1, KindDeny, "mcp__lit__get_data_for_a_spe___location_and_date_range_extended", 27, 7},
		{"permissions.deny", 2, KindDeny, "Bash(rm -rf *)", 28, 7},
		{"tools.exclude", 0, KindDeny, "mcp__lit______", 32, 17},
		{"tools.disabled", 0, KindDisabled, "mcp__foo.bar__get_data", 33, 18},
	}, rows(f.Rules))
	assertTokens(t, data, f.Rules)
	assert.Equal(t, fixtureUser+`:19:7 permissions.allow[0] "mcp__lit__literature.search_pubmed"`, f.Rules[3].String())
	for _, r := range f.Rules {
		assert.Equal(t, fixtureUser, r.File)
		assert.Equal(t, ScopeUser, r.Scope)
		assert.Equal(t, r.Literal, r.Expanded)
	}

	require.Len(t, f.MCPServers, 4)
	type srv struct {
		key, command, url string
		transport         Transport
		trust             bool
		nArgs, nInc, nExc int
		env, headers      []string
	}
	var got []srv
	for _, s := range f.MCPServers {
		got = append(got, srv{s.Key, s.Command, s.URL, s.Transport, s.Trust, len(s.Args),
			len(s.IncludeTools), len(s.ExcludeTools), keys(s.Env), keys(s.Headers)})
	}
	assert.Equal(t, []srv{
		{"lit", "python3", "", TransportStdio, false, 1, 0, 0, nil, nil},
		{"foo.bar", "node", "", TransportStdio, false, 1, 0, 1, []string{"FOOBAR_TOKEN"}, nil},
		{"foo_bar", "", "http://127.0.0.1:8931/mcp", TransportHTTP, false, 0, 0, 0, nil, []string{"Authorization"}},
		{"com.example.enterprise-search", "es-mcp", "", TransportStdio, true, 0, 2, 0, nil, nil},
	}, got)
	assert.Equal(t, "/home/demo/bin/lit_server.py", f.MCPServers[0].Args[0].Reveal())
	assert.Equal(t, `"foo.bar"`, string(data[f.MCPServers[1].Origin.Offset:f.MCPServers[1].Origin.End]))
	assert.Equal(t, fixtureUser+`:7:5 mcpServers."foo.bar"`, f.MCPServers[1].Origin.String())
}

func keys(m map[string]Secret) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestLoadWorkspaceAndRealFixtures(t *testing.T) {
	ws, data := loadFixture(t, fixtureWorkspace, ScopeWorkspace, nil)
	assert.Equal(t, []ruleRow{
		{"permissions.allow", 0, KindAllow, "mcp__foo_bar__get_data_0xybsnb", 3, 15},
		{"permissions.allow", 1, KindAllow, "mcp__lit__*", 3, 49},
		{"permissions.deny", 0, KindDeny, "mcp__foo_bar__evil", 4, 14},
	}, rows(ws.Rules))
	assertTokens(t, data, ws.Rules)
	assert.False(t, ws.HasVersion)
	assert.True(t, ws.V1, "a file without $version is migrated from v1")

	real, _ := loadFixture(t, fixtureRealUser, ScopeUser, nil)
	assert.Empty(t, real.Rules)
	var servers []string
	for _, s := range real.MCPServers {
		servers = append(servers, s.Key)
		assert.Equal(t, TransportStdio, s.Transport)
	}
	assert.Equal(t, []string{"lit", "foo.bar", "com.example.enterprise-search"}, servers)
	assert.Equal(t, "get_data,deploy.prod", real.MCPServers[1].Env["TOOLS"].Reveal())
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		cause     error
		line, col int
	}{
		{"unterminated block comment", "{\n  \"a\": 1 /* never closed\n}\n", ErrSyntax, 2, 10},
		{"unterminated string", "{\n  \"permissions\": {\"allow\": [\"mcp__x]}\n}\n", ErrSyntax, 2, 29},
		{"trailing comma in array", "{\n  \"permissions\": {\n    \"allow\": [\"a\", \"b\",]\n  }\n}\n", ErrTrailingComma, 3, 23},
		{"trailing comma in object", "{\n  \"tools\": {\"exclude\": []},\n}\n", ErrTrailingComma, 2, 27},
		{"trailing comma after comment", "{\"a\": [1, // one\n]}", ErrTrailingComma, 1, 9},
		{"first trailing comma wins", "{\"a\": [1, [2,],],}", ErrTrailingComma, 1, 13},
		{"missing comma at known position", "{\n  \"permissions\": {\n    \"allow\": [\"a\" \"b\"]\n  }\n}\n", ErrSyntax, 3, 19},
		{"bad literal", "{\n\t\"$version\": tru\n}", ErrSyntax, 2, 14},
		{"garbage after value", "{}\n}", ErrSyntax, 2, 1},
		{"byte order mark", "\ufeff{\"permissions\": {}}", ErrByteOrderMark, 1, 1},
		{"empty file", "", ErrSyntax, 1, 1},
		{"top-level array", "  [\"mcp__x\"]", ErrNotObject, 1, 3},
		{"top-level string", "// note\n\"x\"", ErrNotObject, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("dir/settings.json", []byte(tt.in), ScopeUser, nil)
			require.Error(t, err)
			assert.Nil(t, f)
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			assert.ErrorIs(t, err, tt.cause)
			assert.Equal(t, "dir/settings.json", pe.Path)
			assert.Equal(t, [2]int{tt.line, tt.col}, [2]int{pe.Line, pe.Column}, "reason: %s", pe.Reason)
			assert.True(t, strings.HasPrefix(err.Error(), "dir/settings.json:"), err.Error())
			assert.Contains(t, err.Error(), pe.Reason)
		})
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     []ruleRow
		warnings []string
	}{
		{
			name: "CRLF and comments everywhere",
			in: "// head\r\n{ /* a */ \"permissions\" /* b */ : {\r\n  \"deny\": [ // c\r\n" +
				"    \"mcp__x__y\" /* d */, \"mcp__ü__搜\"\r\n  ]\r\n}}\r\n",
			want: []ruleRow{
				{"permissions.deny", 0, KindDeny, "mcp__x__y", 4, 5},
				{"permissions.deny", 1, KindDeny, "mcp__ü__搜", 4, 26},
			},
		},
		{
			name: "comment markers inside strings are text",
			in:   `{"tools": {"exclude": ["mcp__a//b", "/*c*/"]}}`,
			want: []ruleRow{
				{"tools.exclude", 0, KindDeny, "mcp__a//b", 1, 24},
				{"tools.exclude", 1, KindDeny, "/*c*/", 1, 37},
			},
		},
		{
			name: "escapes are decoded",
			in:   `{"permissions": {"ask": ["mcp__a\u002eb__\u641c"]}}`,
			want: []ruleRow{{"permissions.ask", 0, KindAsk, "mcp__a.b__搜", 1, 26}},
		},
		{
			name: "duplicate key: the last one wins",
			in:   "{\"permissions\": {\"allow\": [\"first\"]},\n \"permissions\": {\"allow\": [\"second\"]}}",
			want: []ruleRow{{"permissions.allow", 0, KindAllow, "second", 2, 28}},
			warnings: []string{
				"dir/s.json:2:17: permissions: key appears 2 times; Qwen Code uses the last one",
			},
		},
		{
			name: "wrong types are skipped with a warning",
			in:   "{\"permissions\": {\"allow\": \"mcp__x\", \"deny\": [1, \"mcp__y\", null]},\n \"tools\": []}",
			want: []ruleRow{{"permissions.deny", 1, KindDeny, "mcp__y", 1, 49}},
			warnings: []string{
				"dir/s.json:1:27: permissions.allow: not an array; ignored",
				"dir/s.json:1:46: permissions.deny[0]: not a string; ignored",
				"dir/s.json:1:59: permissions.deny[2]: not a string; ignored",
				"dir/s.json:2:11: tools: not an object; ignored",
			},
		},
		{
			name: "mcp lists and core",
			in:   `{"$version": 3, "mcp": {"allowed": ["lit", "zybio.*"], "excluded": ["scratch-?"]}, "tools": {"core": ["Bash"]}}`,
			want: []ruleRow{
				{"mcp.allowed", 0, KindMCPAllowed, "lit", 1, 37},
				{"mcp.allowed", 1, KindMCPAllowed, "zybio.*", 1, 44},
				{"mcp.excluded", 0, KindMCPExcluded, "scratch-?", 1, 69},
				{"tools.core", 0, KindCore, "Bash", 1, 103},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.in)
			f, err := Parse("dir/s.json", data, ScopeWorkspace, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.want, rows(f.Rules))
			assertTokens(t, data, f.Rules)
			var warnings []string
			for _, w := range f.Warnings {
				warnings = append(warnings, w.String())
			}
			assert.Equal(t, tt.warnings, warnings)
		})
	}
}

func TestV1FlatKeys(t *testing.T) {
	in := `{
  "allowedTools": ["mcp__lit__literature.search_pubmed"],
  "excludeTools": ["mcp__foo.bar__deploy.prod"],
  "coreTools": ["read_file"],
  "allowMCPServers": ["lit"],
  "excludeMCPServers": ["scratch"],
  "approvalMode": "yolo",
  "folderTrust": true
}`
	tests := []struct {
		name        string
		in          string
		wantV1      bool
		wantIgnored bool
		wantMode    string
	}{
		{"unversioned file is migrated", in, true, false, "yolo"},
		{"version 1 is migrated", strings.Replace(in, "{", `{"$version": 1,`, 1), true, false, "yolo"},
		{"versioned file ignores v1 keys", strings.Replace(in, "{", `{"$version": 3,`, 1), false, true, ""},
		{"a string version counts as none", strings.Replace(in, "{", `{"$version": "3",`, 1), true, false, "yolo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("s.json", []byte(tt.in), ScopeUser, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.wantV1, f.V1)
			assert.Equal(t, tt.wantMode, f.ApprovalMode)
			require.Len(t, f.Rules, 5)
			var kinds []Kind
			var keys []string
			for _, r := range f.Rules {
				assert.True(t, r.V1)
				assert.Equal(t, tt.wantIgnored, r.Ignored != "", "Ignored = %q", r.Ignored)
				kinds = append(kinds, r.Kind)
				keys = append(keys, r.Key)
			}
			assert.Equal(t, []Kind{KindAllow, KindDeny, KindCore, KindMCPAllowed, KindMCPExcluded}, kinds)
			assert.Equal(t, []string{"allowedTools", "excludeTools", "coreTools", "allowMCPServers", "excludeMCPServers"}, keys)
			if tt.wantV1 {
				require.NotNil(t, f.FolderTrust)
				assert.True(t, *f.FolderTrust)
			} else {
				assert.Nil(t, f.FolderTrust)
				assert.Len(t, f.Warnings, 5, "one warning per ignored v1 list")
			}
		})
	}
}

func TestLoadExpandsEnvironment(t *testing.T) {
	in := `{
  "permissions": {"allow": ["mcp__${SRV}__*", "Bash(echo $HOME $NOPE)"]},
  "tools": {"approvalMode": "$MODE"},
  "mcpServers": {"$SRV": {"command": "${BIN}/server", "args": ["--token", "$TOKEN"],
    "cwd": "$HOME/srv", "env": {"API_KEY": "$TOKEN", "PLAIN": "x$"},
    "url": "https://h/$SRV", "type": "sse", "headers": {"X-Key": "k-${TOKEN}"}}}
}`
	env := Env{"SRV": "lit", "HOME": "/home/u", "MODE": "yolo", "BIN": "/opt/bin", "TOKEN": "tok123"}
	f, err := Parse("s.json", []byte(in), ScopeUser, env)
	require.NoError(t, err)
	require.Len(t, f.Rules, 2)
	assert.Equal(t, "mcp__${SRV}__*", f.Rules[0].Literal)
	assert.Equal(t, "mcp__lit__*", f.Rules[0].Expanded)
	assert.Equal(t, "Bash(echo /home/u $NOPE)", f.Rules[1].Expanded)
	assert.Equal(t, "yolo", f.ApprovalMode)
	require.Len(t, f.MCPServers, 1)
	s := f.MCPServers[0]
	assert.Equal(t, "$SRV", s.Key, "object keys are never expanded")
	assert.Equal(t, "/opt/bin/server", s.Command)
	assert.Equal(t, "/home/u/srv", s.Cwd)
	assert.Equal(t, "https://h/lit", s.URL)
	assert.Equal(t, TransportSSE, s.Transport)
	assert.Equal(t, []string{"--token", "tok123"}, []string{s.Args[0].Reveal(), s.Args[1].Reveal()})
	assert.Equal(t, "tok123", s.Env["API_KEY"].Reveal())
	assert.Equal(t, "x$", s.Env["PLAIN"].Reveal())
	assert.Equal(t, "k-tok123", s.Headers["X-Key"].Reveal())
}

func TestExpand(t *testing.T) {
	env := Env{"A": "alpha", "EMPTY": "", "B_1": "b", "X Y": "spaced", "DOLLAR": "$A", "QWEN_SERVER_TOKEN": "t"}
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"$A", "alpha"},
		{"${A}", "alpha"},
		{"pre-$A-post", "pre-alpha-post"},
		{"$A$B_1", "alphab"},
		{"$AB", "$AB"},
		{"${A}B", "alphaB"},
		{"$EMPTY|", "|"},
		{"$UNSET and ${UNSET}", "$UNSET and ${UNSET}"},
		{"${X Y}", "spaced"},
		{"$", "$"},
		{"${}", "${}"},
		{"${A", "${A"},
		{"$-A", "$-A"},
		{"$DOLLAR", "$A"},
		{"$QWEN_SERVER_TOKEN", "$QWEN_SERVER_TOKEN"},
		{"mcp__$A__搜索", "mcp__$A__搜索"},
		{"mcp__${A}__搜索", "mcp__alpha__搜索"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, Expand(tt.in, env))
		})
	}
	assert.Equal(t, "$A", Expand("$A", nil), "nil env defines nothing")
}

func TestLoadSourceMissing(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.json")

	f, err := LoadSource(Source{Scope: ScopeUser, Path: missing, Optional: true}, nil)
	assert.NoError(t, err)
	assert.Nil(t, f)

	_, err = LoadSource(Source{Scope: ScopeExplicit, Path: missing}, nil)
	assert.ErrorIs(t, err, os.ErrNotExist)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"a": [1,]}`), 0o600))
	files, errs := LoadAll([]Source{
		{Scope: ScopeSystemDefaults, Path: missing, Optional: true},
		{Scope: ScopeUser, Path: fixtureUser, Optional: true},
		{Scope: ScopeWorkspace, Path: bad, Optional: true},
		{Scope: ScopeSystem, Path: fixtureWorkspace, Optional: true},
	}, nil)
	require.Len(t, files, 2)
	assert.Equal(t, ScopeUser, files[0].Scope)
	assert.Equal(t, ScopeSystem, files[1].Scope)
	require.Len(t, errs, 1)
	var pe *ParseError
	require.True(t, errors.As(errs[0], &pe))
	assert.Equal(t, bad+":1:9: trailing comma; Qwen Code does not accept trailing commas and ignores the whole file", pe.Error())
}

func TestDuplicateServerKeys(t *testing.T) {
	in := `{"mcpServers": {
  "a": {"command": "one", "includeTools": ["x"]},
  "a": {"command": "two", "excludeTools": ["y"]}
}}`
	f, err := Parse("s.json", []byte(in), ScopeUser, nil)
	require.NoError(t, err)
	require.Len(t, f.MCPServers, 1)
	assert.Equal(t, "two", f.MCPServers[0].Command)
	require.Len(t, f.Rules, 2)
	assert.NotEmpty(t, f.Rules[0].Ignored, "the first definition's includeTools is shadowed")
	assert.Empty(t, f.Rules[1].Ignored)
	require.Len(t, f.Warnings, 1)
	assert.Contains(t, f.Warnings[0].Message, "more than once")
}

// TestServerKeyWithDotIsQuoted: mcpServers.foo.bar.excludeTools could be the key "foo" with a
// member "bar"; a key holding a dot is printed quoted (issue 8 item 17).
func TestServerKeyWithDotIsQuoted(t *testing.T) {
	assert.Equal(t, "mcpServers.lit", ServerKeyPath("lit"))
	assert.Equal(t, `mcpServers."foo.bar"`, ServerKeyPath("foo.bar"))
	assert.Equal(t, `mcpServers."a b"`, ServerKeyPath("a b"))
	assert.Equal(t, `mcpServers.""`, ServerKeyPath(""))
	f, err := Parse("dir/settings.json", []byte(`{"mcpServers":{"foo.bar":{"command":"x","excludeTools":"get_data"}}}`), ScopeUser, nil)
	require.NoError(t, err)
	require.Len(t, f.Warnings, 1)
	assert.Contains(t, f.Warnings[0].Message, `mcpServers."foo.bar".excludeTools: not an array`)
	require.Len(t, f.MCPServers, 1)
	assert.Equal(t, `mcpServers."foo.bar"`, f.MCPServers[0].Origin.Key)
}

// TestParseErrorNeverQuotesTheFile: issue 9 item 9. A string or bare value the parser
// rejects may be a secret: the error gives its position and what is wrong, never its text
// (neither in Error nor in the wrapped cause).
func TestParseErrorNeverQuotesTheFile(t *testing.T) {
	for _, tc := range []struct{ doc, reason string }{
		{`{"env": {"TOKEN": "sk-SECRET-1\q"}}`, `1:19: invalid string starting here (a bad escape such as \q, or a control character such as a tab); its text is not shown`},
		{"{\"env\": {\"TOKEN\": \"sk-SECRET-2\tx\"}}", `1:19: invalid string starting here`},
		{`{"env": {"TOKEN": sk-SECRET-3}}`, `1:19: invalid value starting here (not a string, number, true, false or null); its text is not shown`},
	} {
		_, err := Parse("s.json", []byte(tc.doc), ScopeUser, nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "s.json:"+tc.reason)
		assert.NotContains(t, err.Error(), "SECRET")
		assert.NotContains(t, errors.Unwrap(err).Error(), "SECRET")
		assert.ErrorIs(t, err, ErrSyntax)
	}
}
