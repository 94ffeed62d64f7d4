package mcpname

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const claudeFixtures = "../fixtures/claude-real/"

// claudeFixtureTools is the raw tool set of the claude-real runs in configuration order
// (fixtures/claude-real/mcp-config.json; each server's TOOLS in the order it lists them).
var claudeFixtureTools = []ClaudeTool{
	{"lit", "literature.search_pubmed"},
	{"lit", "literature_search_pubmed"},
	{"lit", "get+data"},
	{"lit", "搜索文献"},
	{"lit", "get_data_for_a_specific_location_and_date_range_extended_with_more_words"},
	{"lit", "ok_tool"},
	{"foo.bar", "get_data"},
	{"foo.bar", "deploy.prod"},
	{"com.example.enterprise-search-platform", "query_documents_by_semantic_similarity_and_rank"},
	{"my server", "ping"},
}

// claudeREADMERow is one row of the "Names" table of the fixture README: a raw tool and the
// name each release gave it (the 2.1.332 name of a tool that "cannot be called" is the name of
// the row above, which answers).
type claudeREADMERow struct {
	tool       ClaudeTool
	names      map[string]string // release → name
	lengths    map[string]int    // release → stated length, in characters
	cannotCall bool              // 2.1.332: shares the row above's name, which answers
}

var backticked = regexp.MustCompile("`([^`]*)`")
var statedLen = regexp.MustCompile(`\((\d+)[;)]`)

// readClaudeNamesTable parses the "## Names" table of fixtures/claude-real/README.md.
func readClaudeNamesTable(t *testing.T) []claudeREADMERow {
	t.Helper()
	b, err := os.ReadFile(claudeFixtures + "README.md")
	require.NoError(t, err)
	text := string(b)
	i := strings.Index(text, "## Names")
	require.GreaterOrEqual(t, i, 0)
	text = text[i:]
	var header []string
	var rows []claudeREADMERow
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "|") {
			if header != nil {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for k := range cells {
			cells[k] = strings.TrimSpace(cells[k])
		}
		switch {
		case header == nil:
			header = cells
			continue
		case strings.HasPrefix(cells[0], "---"):
			continue
		}
		id := backticked.FindAllStringSubmatch(cells[0], -1)
		require.Len(t, id, 2, line)
		r := claudeREADMERow{tool: ClaudeTool{id[0][1], id[1][1]}, names: map[string]string{}, lengths: map[string]int{}}
		prev := ""
		for k := 1; k < len(cells); k++ {
			rel := header[k]
			switch c := cells[k]; {
			case strings.HasPrefix(c, "cannot be called"):
				r.cannotCall = true
				r.names[rel] = rows[len(rows)-1].names[rel]
			case strings.HasPrefix(c, "same"):
				r.names[rel] = prev
				r.lengths[rel] = Len(prev)
				if m := statedLen.FindStringSubmatch(c); m != nil {
					r.lengths[rel], _ = strconv.Atoi(m[1])
				}
			default:
				m := backticked.FindStringSubmatch(c)
				require.NotNil(t, m, line)
				r.names[rel] = m[1]
				if l := statedLen.FindStringSubmatch(c); l != nil {
					r.lengths[rel], _ = strconv.Atoi(l[1])
				}
			}
			prev = r.names[rel]
		}
		rows = append(rows, r)
	}
	require.Equal(t, []string{"server / raw tool", "1.0.51", "2.1.332"}, header)
	return rows
}

// TestClaudeNamesOfTheFixtureREADME: every raw → stored name the README records, per release,
// is what ClaudeNameIn gives for the release's era, with the stated length in UTF-16 units; the
// 2.1.332 "cannot be called" tool shares the name of the one that answers.
func TestClaudeNamesOfTheFixtureREADME(t *testing.T) {
	rows := readClaudeNamesTable(t)
	require.Len(t, rows, len(claudeFixtureTools))
	for i, r := range rows {
		assert.Equal(t, claudeFixtureTools[i], r.tool, "row %d in configuration order", i)
		for _, rel := range []string{"1.0.51", "2.1.332"} {
			era, err := ClaudeEraOf(rel)
			require.NoError(t, err)
			assert.Equal(t, r.names[rel], ClaudeNameIn(era, r.tool.Server, r.tool.Tool), "%s %s/%s", rel, r.tool.Server, r.tool.Tool)
			if n, ok := r.lengths[rel]; ok {
				assert.Equal(t, n, Len(r.names[rel]), "%s length of %s", rel, r.names[rel])
			}
		}
	}
	// 1.0.51 offers 10 distinct names; 2.1.332 offers 9, the shared one once, answered by the
	// first tool of the list.
	for rel, want := range map[string]int{"1.0.51": 10, "2.1.332": 9} {
		era, _ := ClaudeEraOf(rel)
		offers := ClaudeOffered(era, claudeFixtureTools)
		names := map[string]bool{}
		for _, o := range offers {
			names[o.Name] = true
		}
		assert.Len(t, offers, want, rel)
		assert.Len(t, names, want, rel)
	}
	offers := ClaudeOffered(ClaudeEraDedup, claudeFixtureTools)
	shared := 0
	for _, o := range offers {
		if o.Shared() {
			shared++
			assert.Equal(t, "mcp__lit__literature_search_pubmed", o.Name)
			assert.Equal(t, []ClaudeTool{{"lit", "literature.search_pubmed"}, {"lit", "literature_search_pubmed"}}, o.Tools)
		}
	}
	assert.Equal(t, 1, shared)
	assert.True(t, rows[1].cannotCall)
	assert.Equal(t, rows[0].names["2.1.332"], rows[1].names["2.1.332"])
}

// claudeLine is what the fixture tests need from a Claude Code session line.
type claudeLine struct {
	Type    string `json:"type"`
	Version string `json:"version"`
	Message struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	Shape struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	} `json:"shape"`
	AttributionMcpServer string `json:"attributionMcpServer"`
	AttributionMcpTool   string `json:"attributionMcpTool"`
}

func readClaudeSession(t *testing.T, path string) []claudeLine {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []claudeLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for sc.Scan() {
		var l claudeLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), path)
		out = append(out, l)
	}
	require.NoError(t, sc.Err())
	return out
}

// toolUseNames returns the mcp__ tool_use names of the session's assistant lines, sorted and
// deduplicated.
func toolUseNames(t *testing.T, lines []claudeLine) []string {
	set := map[string]bool{}
	for _, l := range lines {
		if l.Type != "assistant" || len(l.Message.Content) == 0 || l.Message.Content[0] != '[' {
			continue
		}
		var blocks []struct{ Type, Name string }
		require.NoError(t, json.Unmarshal(l.Message.Content, &blocks))
		for _, b := range blocks {
			if b.Type == "tool_use" && strings.HasPrefix(b.Name, Prefix) {
				set[b.Name] = true
			}
		}
	}
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func offeredNames(e ClaudeEra, tools []ClaudeTool) []string {
	set := map[string]bool{}
	for _, o := range ClaudeOffered(e, tools) {
		set[o.Name] = true
	}
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TestClaudeNamesInTheFixtureSessions: the names the releases actually stored. The 1.0.51
// session (every offered tool called) holds exactly the 1.0.51 names; the 2.1.332 sessions'
// tool lists as sent (api-request-shape tools[]) hold exactly the 9 deduplicated names; the raw
// attributionMcpServer/Tool pairs name to a tool_use name of the same session.
func TestClaudeNamesInTheFixtureSessions(t *testing.T) {
	old := readClaudeSession(t, claudeFixtures+"dot-claude/projects/-home-demo-src-lab/dd19a9ca-e09f-48a6-9120-d559cf0db6fa.jsonl")
	for _, l := range old {
		if l.Version != "" {
			era, err := ClaudeEraOf(l.Version)
			require.NoError(t, err)
			assert.Equal(t, ClaudeEraServerNormalized, era, l.Version)
		}
	}
	assert.Equal(t, offeredNames(ClaudeEraServerNormalized, claudeFixtureTools), toolUseNames(t, old))

	want := offeredNames(ClaudeEraDedup, claudeFixtureTools)
	for _, f := range []string{
		"dot-claude/projects/-home-demo-src-api/fee043f7-27fe-47f6-83b1-76d8335c15e3.jsonl",
		"dot-claude/projects/-home-demo-src-api/441566c6-e193-4f5e-98cf-abf3928419e9/subagents/agent-a02640152bea9bd4b.jsonl",
	} {
		lines := readClaudeSession(t, claudeFixtures+f)
		var shapes, attributions int
		used := toolUseNames(t, lines)
		for _, l := range lines {
			if l.Version != "" {
				era, err := ClaudeEraOf(l.Version)
				require.NoError(t, err)
				assert.Equal(t, ClaudeEraDedup, era, l.Version)
			}
			if l.AttributionMcpServer != "" {
				attributions++
				assert.Contains(t, used, ClaudeNameIn(ClaudeEraDedup, l.AttributionMcpServer, l.AttributionMcpTool), f)
			}
			var mcp []string
			for _, tl := range l.Shape.Tools {
				if strings.HasPrefix(tl.Name, Prefix) {
					mcp = append(mcp, tl.Name)
				}
			}
			if len(mcp) > 0 {
				shapes++
				sort.Strings(mcp)
				assert.Equal(t, want, mcp, f)
			}
		}
		assert.Positive(t, shapes, f)
		assert.Equal(t, want, used, "%s: the stand-in called every offered tool", f)
		if strings.Contains(f, "fee043f7") {
			assert.Positive(t, attributions, f)
		}
	}
}

// TestClaudeEras: the release boundaries, the recorded releases, the spellings of the issue's
// examples in each era (1.0.0 raw, 2.0.14 both normalized) and version parsing.
func TestClaudeEras(t *testing.T) {
	for v, want := range map[string]ClaudeEra{
		"0.2.9": ClaudeEraRaw, "1.0.0": ClaudeEraRaw, "1.0.10": ClaudeEraRaw,
		"1.0.11": ClaudeEraServerNormalized, "1.0.51": ClaudeEraServerNormalized, "1.0.83": ClaudeEraServerNormalized,
		"1.0.84": ClaudeEraNormalized, "2.0.14": ClaudeEraNormalized, "2.1.49": ClaudeEraNormalized,
		"2.1.50": ClaudeEraDedup, "2.1.90": ClaudeEraDedup, "2.1.332": ClaudeEraDedup, "3.0.0-beta.1": ClaudeEraDedup,
		"10.0.0": ClaudeEraDedup,
	} {
		got, err := ClaudeEraOf(v)
		assert.NoError(t, err, v)
		assert.Equal(t, want, got, v)
	}
	for _, bad := range []string{"", "2.1", "v2.1.3", "2.1.x", "2.1.3.4", "1..2"} {
		_, err := ClaudeEraOf(bad)
		assert.ErrorIs(t, err, ErrClaudeVersion, bad)
	}
	last, _ := ClaudeEraOf(ClaudeLatestVersion)
	assert.Equal(t, ClaudeEraDedup, last)
	assert.Equal(t, ClaudeLatestVersion, ClaudeRecordedVersions[len(ClaudeRecordedVersions)-1])

	examples := []struct {
		server, tool string
		want         [4]string // raw, server-normalized, normalized, dedup
	}{
		{"foo.bar", "deploy.prod", [4]string{"mcp__foo.bar__deploy.prod", "mcp__foo_bar__deploy.prod", "mcp__foo_bar__deploy_prod", "mcp__foo_bar__deploy_prod"}},
		{"lit", "搜索文献", [4]string{"mcp__lit__搜索文献", "mcp__lit__搜索文献", "mcp__lit______", "mcp__lit______"}},
		{"lit", "get+data", [4]string{"mcp__lit__get+data", "mcp__lit__get+data", "mcp__lit__get_data", "mcp__lit__get_data"}},
		{"my server", "ping", [4]string{"mcp__my server__ping", "mcp__my_server__ping", "mcp__my_server__ping", "mcp__my_server__ping"}},
		{"srv", "🚀launch", [4]string{"mcp__srv__🚀launch", "mcp__srv__🚀launch", "mcp__srv____launch", "mcp__srv____launch"}},
	}
	for _, ex := range examples {
		for i, e := range ClaudeEras {
			assert.Equal(t, ex.want[i], ClaudeNameIn(e, ex.server, ex.tool), "%s %s/%s", e, ex.server, ex.tool)
		}
	}
	assert.Equal(t, "mcp__foo.bar__", ClaudeServerPrefixIn(ClaudeEraRaw, "foo.bar"))
	assert.Equal(t, "mcp__foo_bar__", ClaudeServerPrefixIn(ClaudeEraServerNormalized, "foo.bar"))
	assert.Equal(t, []string{"raw", "server-normalized", "normalized", "dedup"},
		[]string{ClaudeEraRaw.String(), ClaudeEraServerNormalized.String(), ClaudeEraNormalized.String(), ClaudeEraDedup.String()})

	// Before 2.1.50 a shared name is offered once per tool.
	norm := ClaudeOffered(ClaudeEraNormalized, claudeFixtureTools)
	require.Len(t, norm, 10)
	assert.Equal(t, "mcp__lit__literature_search_pubmed", norm[0].Name)
	assert.Equal(t, "mcp__lit__literature_search_pubmed", norm[1].Name)
	assert.True(t, norm[1].Shared())
	// Two servers whose keys normalize alike share names from 1.0.11 on.
	two := []ClaudeTool{{"foo.bar", "x"}, {"foo_bar", "x"}}
	assert.Len(t, ClaudeToolsNamed(ClaudeEraRaw, "mcp__foo_bar__x", two), 1)
	assert.Equal(t, two, ClaudeToolsNamed(ClaudeEraServerNormalized, "mcp__foo_bar__x", two))
	assert.Nil(t, ClaudeToolsNamed(ClaudeEraDedup, "mcp__foo.bar__x", two))
}
