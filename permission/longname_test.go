package permission

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLongToolNameAgainstManyRules (issue 9, finding 11): matching one tool with a 4 MiB name
// against 48 rules derives the name's spellings (Normalize, Legacy, …) once, not once per rule:
// it allocates less than 48 times the name, where the original main allocated 8.3 GB
// (and minutes and 0.6 GB per format for the 40 MiB name). Bytes allocated are counted,
// not time.
func TestLongToolNameAgainstManyRules(t *testing.T) {
	tool := NewTool("srv", strings.Repeat("t", 4<<20))
	ctx := tool.Context(ContextProducer)
	var rules []Rule
	for i := range 48 {
		rules = append(rules, ParseRule([]string{"mcp__srv__*", "mcp__srv__small", "mcp__srv", "mcp__srv__t*", "Bash(ls)", "mcp__other__x"}[i%6]))
	}
	match := func() int {
		n := 0
		for i, r := range rules {
			if RuleMatch([]Behavior{BehaviorAllow, BehaviorAsk, BehaviorDeny}[i%3], r, ctx, nil) != NoMatch {
				n++
			}
		}
		return n
	}
	match() // the first evaluation derives the spellings
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := match()
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("48 rules x one 4 MiB name: %d MiB allocated", alloc>>20)
	assert.Positive(t, n)
	assert.Less(t, alloc, uint64(48*(4<<20)), "48 rules allocated %d MiB for one 4 MiB name", alloc>>20)
}
