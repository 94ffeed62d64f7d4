package provider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rules returns the rule names p's check of name gives ("" joined: "pattern,length").
func rules(p *Provider, name string, units []uint16) string {
	var out []string
	for _, v := range p.Check(name, units) {
		out = append(out, v.Rule)
	}
	return strings.Join(out, ",")
}

func TestLengthUnits(t *testing.T) {
	for _, c := range []struct {
		name                 string
		utf16, points, bytes int
	}{
		{"abc", 3, 3, 3},
		{"工具", 2, 2, 6},          // CJK: BMP, one UTF-16 unit each, 3 UTF-8 bytes
		{"𝒜b", 3, 2, 5},          // astral: a surrogate pair, 4 UTF-8 bytes
		{"mcp__a__😀", 10, 9, 12}, // emoji is astral too
	} {
		assert.Equal(t, c.utf16, Length(c.name, nil, UnitUTF16), c.name)
		assert.Equal(t, c.points, Length(c.name, nil, UnitCodePoints), c.name)
		assert.Equal(t, c.bytes, Length(c.name, nil, UnitBytes), c.name)
	}
	// A lone surrogate: the exact units are given, the name holds U+FFFD.
	units := []uint16{'a', 0xd800, 'b'}
	assert.Equal(t, 3, Length("a\uFFFDb", units, UnitUTF16))
	assert.Equal(t, 3, Length("a\uFFFDb", units, UnitCodePoints))
	assert.Equal(t, 5, Length("a\uFFFDb", units, UnitBytes))
}

func TestTableRows(t *testing.T) {
	a := func(n int) string { return strings.Repeat("a", n) }
	astral := func(n int) string { return strings.Repeat("𝒜", n) } // 2 UTF-16 units, 1 code point each
	cjk := func(n int) string { return strings.Repeat("工", n) }
	type tc struct{ name, want string } // want: the rules broken, "" = accepted
	cases := map[string][]tc{
		"openai-chat": {
			{"mcp__fs__read_file", ""}, {"mcp__my-srv__x", ""}, {a(64), ""}, {"1tool", ""}, {"_x", ""},
			{a(65), "length"}, {"mcp__fs__read.file", "pattern"}, {"mcp__工具__x", "pattern"},
			{astral(32), "pattern"}, {"a b", "pattern"}, {"", "empty"}, {"search", ""},
		},
		"openai-responses": {
			{a(128), ""}, {a(65), ""}, {a(129), "length"}, {"mcp__fs__read.file", "pattern"}, {"工", "pattern"},
		},
		"anthropic": {
			{a(64), ""}, {a(65), "reference-length"}, {a(128), "reference-length"}, {a(129), "length"},
			{"mcp__fs__read.file", "pattern"}, {"Dockerfile problems scanner", "pattern"}, {"工具", "pattern"},
		},
		"bedrock": {
			{a(64), ""}, {a(65), "length"}, {"$READFILE", "pattern"}, {"mcp__fs__read.file", "pattern"},
			{"mcp__srv__" + a(60) + ".x", "pattern,length"},
		},
		"gemini": {
			{"mcp__fs__read.file", ""}, {"ns:tool", ""}, {"_private", ""}, {a(64), ""},
			{a(65), "length"}, {"1tool", "first-char"}, {"-x", "first-char"}, {"a/b", "pattern"},
			{"工具", "first-char,pattern"}, {".x", "first-char"},
		},
		"deepseek": {
			{a(64), ""}, {a(65), "length"}, {"a.b", "pattern"}, {"1a", ""},
		},
		"dashscope": {
			{"search", "reserved"}, {"Search", ""}, {"web_search", ""}, {"mcp__fs__read.file", ""},
			{a(64), ""}, {a(65), "length"},
			{cjk(64), ""}, {cjk(65), "length"}, // CJK: 1 unit each
			{astral(32), ""}, {astral(33), "length"}, // 33 code points but 66 UTF-16 units
		},
		"mistral": {
			{a(64), ""}, {a(65), "length"}, {"a.b", "pattern"},
		},
		"kimi": {
			{"mcp__fs__read_file", ""}, {a(200), ""}, {"_x", "first-char"}, {"1x", "first-char"},
			{"mcp__fs__read.file", "pattern"}, {"x工", "pattern"}, {"工", "first-char,pattern"},
		},
		"xai": {
			{"tool_search", "reserved"}, {"tool_search_2", ""}, {"a.b", ""}, {a(300), ""},
		},
	}
	require.Len(t, Table(), 10)
	for _, p := range Table() {
		cs, ok := cases[p.ID]
		require.True(t, ok, "no test cases for row %s", p.ID)
		assert.NotEmpty(t, p.Source, p.ID)
		assert.NotEmpty(t, p.Name, p.ID)
		for _, c := range cs {
			assert.Equal(t, c.want, rules(p, c.name, nil), "%s: %q", p.ID, c.name)
		}
	}
}

func TestCheckLoneSurrogate(t *testing.T) {
	// A stored name with a lone surrogate (Site.Units set, Name with U+FFFD) fails every
	// character rule; DashScope (no pattern) counts its exact units.
	units := []uint16{'m', 'c', 'p', 0xd800}
	assert.Equal(t, "pattern", rules(ByID("openai-chat"), "mcp\uFFFD", units))
	assert.Equal(t, "", rules(ByID("dashscope"), "mcp\uFFFD", units))
	assert.Equal(t, "first-char,pattern", rules(ByID("kimi"), "\uFFFD", []uint16{0xdc00}))
}

func TestViolationDetailQuotesRule(t *testing.T) {
	vs := ByID("bedrock").Check(strings.Repeat("a", 70)+".", nil)
	require.Len(t, vs, 2)
	assert.Equal(t, "does not match [a-zA-Z0-9_-]+", vs[0].Detail)
	assert.Equal(t, "71 code points > 64", vs[1].Detail)
	assert.Equal(t, "\"search\" is a reserved name", ByID("dashscope").Check("search", nil)[0].Detail)
	assert.Equal(t, "[a-zA-Z0-9_-]+; at most 128 code points; tool_reference at most 64", ByID("anthropic").Rule())
}

func TestProfileFile(t *testing.T) {
	p, err := LoadProfile(filepath.Join("..", "docs", "my-gateway.json"))
	require.NoError(t, err)
	assert.Equal(t, "my-gateway", p.ID)
	assert.Equal(t, "", rules(p, "mcp__fs__read_file", nil))
	assert.Equal(t, "length", rules(p, strings.Repeat("a", 49), nil))
	assert.Equal(t, "first-char", rules(p, "_x", nil))
	assert.Equal(t, "reserved", rules(p, "search", nil))
	assert.Equal(t, HistoryYes, p.History)

	dir := t.TempDir()
	for body, want := range map[string]string{
		`{"id":"g","max_lenght":3}`:                   `unknown field "max_lenght"`,
		`{"id":"g","pattern":"[a-"}`:                  "pattern \"[a-\"",
		`{"id":"g"}`:                                  "no rule",
		`{"pattern":"x"}`:                             `"id" is missing`,
		`{"id":"g","max_length":3,"unit":"chars"}`:    `unit "chars"`,
		`{"id":"g","max_length":3,"history":"maybe"}`: `history "maybe"`,
		`not json`: "invalid character",
	} {
		f := filepath.Join(dir, "p.json")
		require.NoError(t, os.WriteFile(f, []byte(body), 0o600))
		_, err := LoadProfile(f)
		require.Error(t, err, body)
		assert.Contains(t, err.Error(), want, body)
		assert.Contains(t, err.Error(), f, body)
	}
	// Defaults: unit utf16, history unknown.
	q, err := ParseProfile("x.json", []byte(`{"id":"g","max_length":2}`))
	require.NoError(t, err)
	assert.Equal(t, UnitUTF16, q.Unit)
	assert.Equal(t, HistoryUnknown, q.History)
	assert.Equal(t, "", rules(q, "𝒜", nil))        // 2 UTF-16 units: at the limit
	assert.Equal(t, "length", rules(q, "𝒜b", nil)) // 3 units, though 2 code points
}

// A profile file with a JSON syntax or type error names file:LINE:COL of the bad byte, over
// several lines (before: the file and encoding/json's reason only).
func TestProfileErrorNamesLineAndColumn(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, body, at, reason string }{
		// the comma missing after line 3's value: the next key (line 4, column 3) is refused
		{"missing comma", "{\n  \"id\": \"acme\",\n  \"pattern\": \"^[a-z_]+$\"\n  \"max_length\": 64\n}\n", ":4:3: ", "after object key:value pair"},
		// a string where a number goes: its closing quote, line 3 column 20
		{"wrong type", "{\n  \"id\": \"acme\",\n  \"max_length\": \"64\"\n}\n", ":3:20: ", "cannot unmarshal string"},
		// cut short: its last byte, line 2 column 14
		{"truncated", "{\n  \"id\": \"acme\"", ":2:14: ", "unexpected EOF"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := filepath.Join(dir, "bad.json")
			require.NoError(t, os.WriteFile(f, []byte(tt.body), 0o600))
			_, err := Resolve(f)
			require.Error(t, err)
			assert.Contains(t, err.Error(), f+tt.at, err.Error())
			assert.Contains(t, err.Error(), tt.reason)
		})
	}
	// An unknown member has no offset in encoding/json: the file and the member are named.
	_, err := ParseProfile("p.json", []byte("{\"id\":\"g\",\n\"max_lenght\":3}"))
	require.Error(t, err)
	assert.Equal(t, `p.json: json: unknown field "max_lenght"`, err.Error())
}

func TestResolve(t *testing.T) {
	ps, err := Resolve("all")
	require.NoError(t, err)
	assert.Len(t, ps, 10)
	ps, err = Resolve("kimi, openai-chat,kimi")
	require.NoError(t, err)
	require.Len(t, ps, 2)
	assert.Equal(t, "kimi", ps[0].ID)
	assert.Equal(t, "openai-chat", ps[1].ID)
	ps, err = Resolve("bedrock,../docs/my-gateway.json")
	require.NoError(t, err)
	require.Len(t, ps, 2)
	assert.Equal(t, "my-gateway", ps[1].ID)
	_, err = Resolve("openai")
	require.ErrorContains(t, err, `unknown provider "openai"`)
	_, err = Resolve("")
	require.ErrorContains(t, err, "no provider given")
}

// TestDocsListEveryRow: docs/providers.md lists every row of the table (a row added to the data
// and not to the docs fails here). The README links it rather than repeating it.
func TestDocsListEveryRow(t *testing.T) {
	for _, f := range []string{"../docs/providers.md"} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, p := range Table() {
			assert.Contains(t, string(b), "| `"+p.ID+"` |", "%s does not list %s", f, p.ID)
		}
	}
}
