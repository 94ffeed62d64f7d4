package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/agent/opencode"
	"github.com/sessionfix/sessionfix/agent/opencode/opencodebench"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
)

// fastEdgeRows are part.data values (and, with $.part, event.data) where a literal search
// could be fooled: nested, duplicate and escaped keys, escaped names, non-string values, keys
// inside strings, whitespace, invalid JSON and UTF-8, JSON5, BLOBs.
var fastEdgeRows = []string{
	`'{"type":"tool","callID":"c1","tool":"lit.a"}'`,
	`'{"type":"tool","state":{"tool":"x.y"}}'`,
	`'{"type":"tool","tool":"a.b","state":{"tool":"x.y"}}'`,
	`'{"type":"tool","tool":"a.b","state":{"tool":"a.b"}}'`,
	`'{"type":"tool","state":{"tool":"a.b"},"tool":"a.b"}'`,
	`'{"type":"tool","t\u006fol":"a.b","state":{"tool":"a.b"}}'`,
	`'{"type":"tool","t\u006fol":"lit.esc"}'`,
	`'{"type":"tool","tool":"lit\u002ex"}'`,
	`'{"type":"tool","tool":"lit\ud800x"}'`,
	`'{"type":"tool","tool":"a\\b.c"}'`,
	`'{"type":"tool","tool":5}'`,
	`'{"type":"tool","tool":{"a":"b.c"}}'`,
	`'{"type":"tool","tool":["a.b"]}'`,
	`'{"type":"tool","tool":null}'`,
	`'{"type":"tool","tool":"a.b","tool":"c.d"}'`,
	`'{"type":"text","text":"say \"tool\":\"x.y\""}'`,
	`'{"type":"text","tool":"a.b"}'`,
	`'{"type":1,"tool":"a.b"}'`,
	`'{"type":"text","type":"tool","tool":"dup.type"}'`,
	`'{"type":"tool","type":"text","tool":"dup.type2"}'`,
	`'{ "type" : "tool" , "tool" :  "lit.ws" }'`,
	"'{\n  \"type\": \"tool\",\n  \"tool\": \"lit.nl\"\n}'",
	`'{"type":"tool","tool":"a.b"'`,
	`CAST(X'7B2274797065223A22746F6F6C222C22746F6F6C223A2261FF2E62227D' AS TEXT)`,
	`X'7B2274797065223A22746F6F6C222C22746F6F6C223A22626C6F622E61227D'`,
	`'{"type":"tool","callID":7,"tool":"a.num"}'`,
	`'{"type":"tool","callID":{"x":"y"},"tool":"a.obj"}'`,
	`'{"type":"tool","callID":"c\"q","tool":"a.q"}'`,
	`'{"type":"tool","x\"tool":1,"tool":"q.r"}'`,
	`'{"type":"tool","tool":"a.b",}'`,
	`'{type:"tool","tool":"json5.a"}'`,
	`'{"type":"tool","tool":"lit_搜索.x"}'`,
	`'{"type":"tool","tool":""}'`,
	`'{"type":"tool","tool":"tool"}'`,
	`'{"tool":"first.key","type":"tool"}'`,
	`'   '`,
	`''`,
	`NULL`,
	`42`,
	`'"tool"'`,
	`'[{"type":"tool","tool":"in.array"}]'`,
	`'{"type":"tool","tool":"ctl` + "\t" + `x"}'`,
	`'{"type":"tool","tool":"a.b"} x'`,
	`'{"type":"tool","tool":"a.b"}  '`,
	// the one-pass extractor (extract.go): duplicate keys on a path, escaped keys elsewhere,
	// strict numbers and literals, control bytes, nesting, other top-level values
	`'{"type":"tool","part":{"tool":"x.y"},"part":{"tool":"z.w"},"tool":"dup.part"}'`,
	`'{"type":"tool","callID":"c1","callID":"c2","tool":"dup.call"}'`,
	`'{"type":"tool","a\"b":1,"tool":"esc.other"}'`,
	`'{"type":"tool","n":01,"tool":"num.lead0"}'`,
	`'{"type":"tool","n":1.,"tool":"num.dot"}'`,
	`'{"type":"tool","n":-,"tool":"num.minus"}'`,
	`'{"type":"tool","n":1e,"tool":"num.exp"}'`,
	`'{"type":"tool","n":-0.5E+10,"tool":"num.ok"}'`,
	`'{"type":"tool","n":tru,"tool":"lit.bad"}'`,
	`'{"type":"tool","n":[true,false,null,{},[]],"tool":"lit.ok"}'`,
	`'{"type":"tool","s":"a` + "\x01" + `b","tool":"ctl.other"}'`,
	`'{"type":"tool","s":"\x","tool":"esc.bad"}'`,
	`'{"type":"tool","s":"\u12G4","tool":"esc.hex"}'`,
	`'{"type":"tool","s":"\/\b\f\n\r\t\\\"","tool":"esc.all"}'`,
	`'{"type":"tool","d":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `,"tool":"deep.a"}'`,
	`'{"type":"tool","d":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `,"tool":"deep.ok"}'`,
	`'{"type":"tool","tool":"a.b"}{}'`,
	`'{"type":"tool",,"tool":"a.b"}'`,
	`'{"type":"tool" "tool":"a.b"}'`,
	`'{"type":"tool","tool":"x.\"q\""}'`,
	`'	{"type":"tool","tool":"ws.lead"}'`,
	`'{"type":"tool","state":{"type":"tool","tool":"nested.only"}}'`,
	`'{"x":{"tool":"a.b","type":"tool"},"type":"tool","tool":"c.d"}'`,
	`'{"type":"tool","tool":"plain.ok","s":"x\\u0041"}'`,
	`'{"type":"tool","callID":"c\ud800","tool":"lone.call"}'`,
	`'{"type":"t\u006fol","tool":"esc.when"}'`,
	`'{"type":"to\ud800ol","tool":"lone.when"}'`,
	`'{"type":"tool","callID":"c\"1","tool":"esc.call"}'`,
	// long strings: the 16-byte steps of the extractor's string scan
	`'{"type":"tool","s":"` + strings.Repeat("abcdefgh", 3) + "\x01" + strings.Repeat("x", 20) + `","tool":"ctl.long"}'`,
	`'{"type":"tool","s":"` + strings.Repeat("abcdefgh", 3) + `\"q\"` + strings.Repeat("é", 20) + `","tool":"esc.long"}'`,
	`'{"type":"tool","s":"` + strings.Repeat("abcdefgh", 3) + `\q` + strings.Repeat("x", 20) + `","tool":"badesc.long"}'`,
	`'{"type":"tool","callID":"` + strings.Repeat("c", 37) + `","tool":"` + strings.Repeat("n", 33) + `.long"}'`,
}

func edgeDB(t *testing.T) string {
	var b strings.Builder
	b.WriteString("sql:CREATE TABLE session (id TEXT PRIMARY KEY, permission TEXT);\nCREATE TABLE message (id TEXT PRIMARY KEY, data TEXT);\n")
	b.WriteString("CREATE TABLE part (id TEXT PRIMARY KEY, session_id TEXT, data TEXT);\nCREATE TABLE event (id TEXT PRIMARY KEY, aggregate_id TEXT, type TEXT, data TEXT);\nBEGIN;\n")
	for i, v := range fastEdgeRows {
		fmt.Fprintf(&b, "INSERT INTO part VALUES ('p%02d', 's1', %s);\n", i, v)
		ev := v
		if strings.HasPrefix(v, "'{") {
			ev = `'{"sessionID":"s1","part":` + v[1:len(v)-1] + `}'`
		}
		fmt.Fprintf(&b, "INSERT INTO event VALUES ('e%02d', 's1', 'message.part.updated.1', %s);\n", i, ev)
	}
	b.WriteString("COMMIT;\n")
	return buildDB(t, "edge.db", b.String())
}

// TestFastPathAgreesWithLexer: the SQL-assisted path (fast.go) and the full lexer give the
// same sites, problems, identities and records on every fixture, a generated database and the
// edge cases above; the counts say how many rows the fast path read.
func TestFastPathAgreesWithLexer(t *testing.T) {
	ctx := context.Background()
	gen := filepath.Join(t.TempDir(), "gen.db")
	_, err := opencodebench.Generate(ctx, gen, 3000)
	require.NoError(t, err)
	cases := []struct {
		name string
		path string
		prof *sqlite.Profile
	}{
		{"opencode real+legacy", opencodeDB(t), nil},
		{"edge cases", edgeDB(t), opencode.Profile},
		{"generated", gen, nil},
		{"crush", buildDB(t, "crush.db", crushSQL), nil},
		{"goose", buildDB(t, "goose.db", gooseSQL), nil},
		{"codex history", buildDB(t, "h.db", codexHistory), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scan := func(fast bool) *store.Snapshot {
				defer sqlite.SetFastPath(fast)()
				st := sqlite.Open(c.path, all.SQLiteOptions(sqlite.Options{}))
				if c.prof != nil {
					st = sqlite.OpenWith(c.path, c.prof, sqlite.Options{})
				}
				snap, err := st.Scan(ctx, store.ScanOptions{})
				require.NoError(t, err)
				return snap
			}
			fast, full := scan(true), scan(false)
			assert.Zero(t, sqlite.FastRows(full))
			assert.Equal(t, full.Sites, fast.Sites)
			assert.Equal(t, full.Problems, fast.Problems)
			assert.Equal(t, full.Identities, fast.Identities)
			assert.Equal(t, full.Records, fast.Records)
			t.Logf("%d rows, %d sites, %d problems; %d rows by the SQL-assisted path", full.Records, len(full.Sites), len(full.Problems), sqlite.FastRows(fast))
			if c.name == "edge cases" || c.name == "generated" {
				assert.Positive(t, sqlite.FastRows(fast))
			}
		})
	}
}

// TestFastPathSitePathOnly: a table spec with a site path and no when, call id or server path
// (a user's profile) goes through the SQL-assisted path too, with the lexer's sites.
func TestFastPathSitePathOnly(t *testing.T) {
	ctx := context.Background()
	prof := &sqlite.Profile{Name: "one", Agent: opencode.Profile.Agent, Tables: []sqlite.TableSpec{
		{Table: "part", Column: "data", Sites: []sqlite.SiteSpec{{Path: "$.tool", Kind: "call"}}}}}
	db := buildDB(t, "one.db", "sql:CREATE TABLE part (id TEXT PRIMARY KEY, data TEXT);\n"+
		`INSERT INTO part VALUES ('p1', '{"tool":"a.b"}'), ('p2', '{"x":1}'), ('p3', '{"tool":"c\u002ed"}');`)
	scan := func(fast bool) *store.Snapshot {
		defer sqlite.SetFastPath(fast)()
		snap, err := sqlite.OpenWith(db, prof, sqlite.Options{}).Scan(ctx, store.ScanOptions{})
		require.NoError(t, err)
		return snap
	}
	fast, full := scan(true), scan(false)
	require.Len(t, full.Sites, 2)
	assert.Equal(t, full.Sites, fast.Sites)
	assert.Equal(t, full.Problems, fast.Problems)
	assert.Equal(t, int64(2), sqlite.FastRows(fast), "p1 and p2 by the SQL-assisted path, p3 (escaped name) by the lexer")
}
