package sqlite

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// TestValueReusesItsScanner: Compiled.Value finds the same sites and says the same problems
// whether one Compiled reads every value in turn (its long-lived JSON Lines scanner) or a new
// one reads each: an unfinished value ("{": no record ends at the line break), a blank one,
// invalid UTF-8, a pretty-printed one and trailing data leave the next value's sites intact.
func TestValueReusesItsScanner(t *testing.T) {
	p, err := ParseProfile([]byte(`{"name": "v", "agent": "test", "tables": [{"table": "chat", "column": "chat", "key": ["id"],
 "sites": [{"path": "$.messages[*].output[*].name", "when": {"path": "$.messages[*].output[*].type", "in": ["function_call"]}, "kind": "call", "call_id": "$.messages[*].output[*].call_id"}]}]}`))
	require.NoError(t, err)
	call := func(n int) string {
		return fmt.Sprintf(`{"messages": [{"output": [{"type": "function_call", "call_id": "k%d", "name": "srv.tool_%d"}]}]}`, n, n)
	}
	values := []string{call(1), "{", call(2), "   ", call(3), "{\"messages\": [\"\xff\"]}", call(4),
		"{\n  \"messages\": [{\"output\": [{\"type\": \"function_call\", \"name\": \"a.b\"}]}]\n}", call(5),
		call(6) + ` {"x": 1}`, call(7), "\xEF\xBB\xBF" + call(8), call(9), `{"messages": [{"output": [{"type": "function_call", "name": "unterminated`, call(10), "", call(11)}
	type result struct {
		why   string
		sites []store.Site
	}
	read := func(c *Compiled, v string) result {
		var r result
		r.why = c.Value(0, []byte(v), ValueOptions{Loc: store.Loc{Row: "chat id=x"}}, func(s store.Site) { r.sites = append(r.sites, s) })
		return r
	}
	reused, err := Compile(p)
	require.NoError(t, err)
	for i, v := range values {
		fresh, err := Compile(p)
		require.NoError(t, err)
		want := read(fresh, v)
		assert.Equal(t, want, read(reused, v), "value %d %q", i, v)
		if i%2 == 0 {
			require.Len(t, want.sites, 1, "value %d", i)
		}
	}
}
