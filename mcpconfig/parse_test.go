package mcpconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func expandWith(env Env) Options {
	return Options{Agent: "Some Agent", Expand: func(s string) string { return Expand(s, env, map[string]bool{"HIDDEN": true}) }}
}

// Parse reads every server in file order with its transport, its key's position and expanded
// values; a repeated key keeps the last definition at the first one's place; secrets never
// print; warnings name the position, the key path and the agent, never a value.
func TestParseServers(t *testing.T) {
	data := []byte("// comment\n{\n  \"mcpServers\": {\n" +
		"    \"a\": {\"command\": \"$BIN\", \"args\": [\"--token\", \"${TOK}\", 3], \"env\": {\"K\": \"v-$TOK\"}},\n" +
		"    \"foo.bar\": {\"url\": \"http://h/sse\", \"type\": \"sse\", \"timeout\": 2500, \"trust\": true},\n" +
		"    \"a\": {\"httpUrl\": \"http://h/mcp\", \"headers\": {\"Authorization\": \"Bearer $HIDDEN\"}, \"timeout\": \"x\"},\n" +
		"    \"bad\": 1,\n" +
		"    \"none\": {}\n" +
		"  }\n}\n")
	servers, warnings, err := Parse("/p/.mcp.json", data, expandWith(Env{"BIN": "/bin/srv", "TOK": "sk-SECRET", "HIDDEN": "no"}))
	require.NoError(t, err)
	require.Len(t, servers, 3)
	assert.Equal(t, []string{"a", "foo.bar", "none"}, []string{servers[0].Key, servers[1].Key, servers[2].Key})

	a := servers[0] // the second definition of "a", at the first one's place
	assert.Equal(t, TransportHTTP, a.Transport)
	assert.Equal(t, "http://h/mcp", a.URL)
	assert.Equal(t, "httpUrl", a.URLKey)
	assert.Empty(t, a.Command)
	assert.Equal(t, "Bearer $HIDDEN", a.Headers["Authorization"].Reveal(), "a never-expanded name stays as written")
	assert.Equal(t, Pos{Offset: 210, End: 213, Line: 6, Column: 5}, a.Pos)
	assert.Equal(t, `"a"`, string(data[a.Pos.Offset:a.Pos.End]))

	fb := servers[1]
	assert.Equal(t, TransportSSE, fb.Transport)
	assert.Equal(t, int64(2500), fb.TimeoutMS)
	assert.True(t, fb.Trust)
	assert.Equal(t, Pos{Offset: 123, End: 132, Line: 5, Column: 5}, fb.Pos)
	assert.Equal(t, TransportNone, servers[2].Transport)

	var msgs []string
	for _, w := range warnings {
		msgs = append(msgs, w.String())
	}
	assert.Equal(t, []string{
		`/p/.mcp.json:4:60: mcpServers.a.args[2]: not a string; ignored`,
		`/p/.mcp.json:6:97: mcpServers.a.timeout: not a number; ignored`,
		`/p/.mcp.json:6:5: mcpServers.a: server key appears more than once; Some Agent uses the last one`,
		`/p/.mcp.json:7:12: mcpServers.bad: not an object; ignored`,
	}, msgs)

	// The first definition's values: expanded, secret.
	first, _, err := Parse("/p/.mcp.json", []byte(`{"mcpServers": {"a": {"command": "$BIN", "args": ["--token", "${TOK}", 3], "env": {"K": "v-$TOK"}}}}`),
		expandWith(Env{"BIN": "/bin/srv", "TOK": "sk-SECRET"}))
	require.NoError(t, err)
	s := first[0]
	assert.Equal(t, TransportStdio, s.Transport)
	assert.Equal(t, "/bin/srv", s.Command)
	require.Len(t, s.Args, 2)
	assert.Equal(t, "sk-SECRET", s.Args[1].Reveal())
	assert.Equal(t, "v-sk-SECRET", s.Env["K"].Reveal())
	assert.NotContains(t, fmt.Sprintf("%v %+v %#v", s, s, s), "SECRET")
}

// A file the agent's JSON.parse rejects is a *ParseError at the place to look, worded with the
// agent's name, never quoting the file's text.
func TestParseDocErrors(t *testing.T) {
	cases := []struct {
		name, data string
		cause      error
		want       string
	}{
		{"bom", "\ufeff{}", ErrByteOrderMark, "f:1:1: file starts with a UTF-8 byte order mark; Some Agent's JSON.parse rejects it and ignores the whole file"},
		{"trailing comma", "{\n  \"mcpServers\": {\"a\": {},}\n}", ErrTrailingComma, "f:2:25: trailing comma; Some Agent does not accept trailing commas and ignores the whole file"},
		{"open string", "{\n  \"a\": \"sk-SECRET\n}", ErrSyntax, "f:2:8: string is not closed on its line"},
		{"bad literal", "{\"a\": \"sk-SECRET\\q\"}", ErrSyntax, `f:1:7: invalid string starting here (a bad escape such as \q, or a control character such as a tab); its text is not shown`},
		{"not object", "\n [1]", ErrNotObject, "f:2:2: settings file is not a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Parse("f", []byte(c.data), expandWith(nil))
			var pe *ParseError
			require.True(t, errors.As(err, &pe), "%v", err)
			assert.True(t, errors.Is(err, c.cause))
			assert.Equal(t, c.want, err.Error())
			assert.NotContains(t, err.Error(), "SECRET")
		})
	}
}

// Read of a missing file is os.ReadFile's error; a file without "mcpServers" has no servers.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	_, _, err := Read(filepath.Join(dir, "missing.json"), Options{})
	assert.ErrorIs(t, err, os.ErrNotExist)
	p := filepath.Join(dir, "c.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"other": 1}`), 0o600))
	servers, warnings, err := Read(p, Options{})
	require.NoError(t, err)
	assert.Empty(t, servers)
	assert.Empty(t, warnings)
}
