package layering

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
)

// agentWordAllowed says where a non-test Go file may name an agent of the list (its id, any
// case, also in comments): the agent's own room, the agent list, and the naming and
// rule-matching functions, which reproduce each agent's published rules (mcpname, permission,
// naming). provider/table.go names Qwen as the model family of the Alibaba DashScope provider
// ("Alibaba DashScope (Qwen)", a product name in JSON output) and cites Qwen Code's tracker.
// "gemini" is also the id of a provider of that table (Google's API, not the Gemini CLI agent):
// provider/table.go declares it and agent/qwen/sent.go names it (Qwen Code sends stored names
// to that provider verbatim). provider/table.go cites an issue of Cline's tracker as the source
// of a provider's error text.
func agentWordAllowed(file, id string) bool {
	for _, p := range []string{"agent/" + id, "agent/all", "mcpname", "permission", "naming"} {
		if under(filepath.ToSlash(filepath.Dir(file)), p) {
			return true
		}
	}
	switch id {
	case "qwen":
		return file == "provider/table.go"
	case "gemini":
		return file == "provider/table.go" || file == "agent/qwen/sent.go"
	case "cline":
		return file == "provider/table.go"
	}
	return false
}

// ordinary lists the English words that hold an agent's id without naming the agent
// ("declined" holds "cline", "kilobytes" "kilo"), file names another agent reads too (Kilo's
// CLI, a fork, reads its upstream's opencode.json), and another product's identifier that holds
// an agent's id (Cline's VS Code extension is saoudrizwan.claude-dev): ordinaryWords blanks them
// before the search.
var ordinary = map[string][]string{
	"opencode": {"opencode.json"},
	"claude":   {"saoudrizwan.claude-dev"},
	"cline":    {"decline", "incline", "recline"},
	"kilo":     {"kilobyte", "kilogram", "kilometer", "kilometre", "kilohertz"},
}

// ordinaryWords is text (lower case) with the ordinary words holding id blanked out.
func ordinaryWords(id, text string) string {
	for _, w := range ordinary[id] {
		text = strings.ReplaceAll(text, w, strings.Repeat(" ", len(w)))
	}
	return text
}

// TestOnlyTheRoomNamesItsAgent is issue 10's acceptance search (`git grep -l -i <agent> --
// '*.go' ':!*_test.go'` lists the agent's room, the agent list and naming functions only) as a
// test, for every agent of agent/all: adding an agent's name to the engine, the pipeline or the
// command fails make test instead of being found by a later search.
func TestOnlyTheRoomNamesItsAgent(t *testing.T) {
	root := "../.."
	var files []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "fixtures" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	}))
	require.Greater(t, len(files), 100, "the walk found the module's sources")
	require.GreaterOrEqual(t, len(all.Agents), 6)
	for _, a := range all.Agents {
		id := strings.ToLower(string(a.Core().ID))
		var named, outside []string
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(root, f))
			require.NoError(t, err)
			if !strings.Contains(ordinaryWords(id, strings.ToLower(string(b))), id) {
				continue
			}
			named = append(named, f)
			if !agentWordAllowed(f, id) {
				outside = append(outside, f)
			}
		}
		sort.Strings(outside)
		assert.NotEmpty(t, named, "%s: its own room names it", id)
		assert.Empty(t, outside, "%s is named outside its room, the agent list and the naming functions: move the code into agent/%s (or behind a hook of agent), or say it in words that name no agent", id, id)
	}
}
