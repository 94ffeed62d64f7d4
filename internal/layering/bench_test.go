package layering

import (
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// benchTool is make bench's command: the one product-side importer of the bench list.
const benchTool = "cmd/sessionfix-bench"

// isBench says whether pkg is benchmark-corpus code: an agent's bench generator in its room
// (agent/qwen/qwenbench, agent/opencode/opencodebench), the bench list (agent/all/allbench) —
// any package whose name ends in "bench" — or their contract internal/benchcorpus.
func isBench(pkg string) bool {
	return strings.HasSuffix(path.Base(pkg), "bench") || pkg == "internal/benchcorpus"
}

// TestBenchCodeStaysOutOfTheProduct (issue 10): no product package imports a bench package or
// the test-only SQLite helpers — only the bench tool and other bench code do; the bench tool
// names no agent (it imports no room, only the list agent/all/allbench); the contract
// internal/benchcorpus imports nothing of the module. A room's bench package is inside the
// room, so TestEnginesKnowNoAgent's room rules hold for it too (no other room, not agent/all).
func TestBenchCodeStaysOutOfTheProduct(t *testing.T) {
	all := imports(t)
	for _, p := range []string{"agent/qwen/qwenbench", "agent/opencode/opencodebench", "agent/all/allbench", "internal/benchcorpus", benchTool} {
		require.Contains(t, all, p)
	}
	rs := rooms(all)
	for pkg, imps := range all {
		for _, imp := range imps {
			target, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if isBench(target) {
				assert.True(t, pkg == benchTool || isBench(pkg), "%s imports %s: bench corpora are for make bench and tests only", pkg, target)
			}
			if pkg == "internal/benchcorpus" {
				assert.Fail(t, "internal/benchcorpus must import nothing of the module", "it imports %s", target)
			}
			if pkg == benchTool {
				for _, r := range rs {
					assert.False(t, under(target, r), "%s imports the agent room %s: it takes its corpora from agent/all/allbench", pkg, target)
				}
				assert.False(t, target == "agent/all", "%s takes its corpora from agent/all/allbench, not the agent list", pkg)
			}
		}
	}
}
