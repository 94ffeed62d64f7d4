package mcpname

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vectorRow is one row of fixtures/vectors/qwen-names.jsonl (produced by Qwen Code 0.24.4).
type vectorRow struct {
	Raw           string `json:"raw"`
	Normalized    string `json:"normalized"`
	McpNormalized string `json:"mcp_normalized"`
	Legacy        string `json:"legacy"`
}

func loadVectors(t testing.TB) []vectorRow {
	t.Helper()
	f, err := os.Open("../fixtures/vectors/qwen-names.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var rows []vectorRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r vectorRow
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		rows = append(rows, r)
	}
	require.NoError(t, sc.Err())
	return rows
}

func TestVectors(t *testing.T) {
	rows := loadVectors(t)
	require.Len(t, rows, 2283, "vector file must hold every row of the reference table")
	for i, r := range rows {
		if got := Normalize(r.Raw); got != r.Normalized {
			t.Errorf("row %d Normalize(%q) = %q, want %q", i+1, r.Raw, got, r.Normalized)
		}
		if got := NormalizeMcp(r.Raw); got != r.McpNormalized {
			t.Errorf("row %d NormalizeMcp(%q) = %q, want %q", i+1, r.Raw, got, r.McpNormalized)
		}
		if got := Legacy(r.Raw); got != r.Legacy {
			t.Errorf("row %d Legacy(%q) = %q, want %q", i+1, r.Raw, got, r.Legacy)
		}
		u := Units(r.Raw)
		assert.Equal(t, r.Normalized, NormalizeUnits(u), "row %d NormalizeUnits", i+1)
		assert.Equal(t, r.Legacy, LegacyUnits(u), "row %d LegacyUnits", i+1)
	}
}

// TestReferenceTable checks the hand-computed table of qwen-reference.md §1.5 (hash column
// included) and the real-run registered names of naming.md §5.
func TestReferenceTable(t *testing.T) {
	tests := []struct {
		name, in, normalized, hash, legacy string
	}{
		{"simple safe", "mcp__github__create_issue", "mcp__github__create_issue", "182d3ts", "mcp__github__create_issue"},
		{"dot in tool", "mcp__zybio__literature.search_pubmed", "mcp__zybio__literature_search_pubmed_0bhdeaz", "0bhdeaz", "mcp__zybio__literature.search_pubmed"},
		{"dot in server", "mcp__foo.bar__evil", "mcp__foo_bar__evil_1oxrpi0", "1oxrpi0", "mcp__foo.bar__evil"},
		{"colon server", "mcp__foo:bar__a.b", "mcp__foo_bar__a_b_1aofxjh", "1aofxjh", "mcp__foo_bar__a.b"},
		{"CJK tool", "mcp__docs__搜索文档", "mcp__docs_______0gcjtbc", "0gcjtbc", "mcp__docs______"},
		{"emoji tool", "mcp__fun__party🎉time", "mcp__fun__party__time_0ausra2", "0ausra2", "mcp__fun__party__time"},
		{"emoji only", "🎉", "tool____0swncdy", "0swncdy", "__"},
		{"leading digit", "1password__get", "tool_1password__get_0hqy22t", "0hqy22t", "1password__get"},
		{"empty", "", "tool__0ztntfp", "0ztntfp", ""},
		{"64 a", strings.Repeat("a", 64), strings.Repeat("a", 55) + "_1obvw5h", "1obvw5h", strings.Repeat("a", 28) + "___" + strings.Repeat("a", 32)},
		{"mcp 63 with dot", "mcp__srv__" + strings.Repeat("t", 52) + ".", "mcp__srv__" + strings.Repeat("t", 45) + "_15l17e6", "15l17e6", "mcp__srv__" + strings.Repeat("t", 52) + "."},
		{"long url server", "mcp__https://mcp.services.example.internal/sse?team=infra__deploy", "mcp__https___mcp_services_example_internal_sse_team_inf_01wr6ix", "01wr6ix", "mcp__https___mcp.services.ex___.internal_sse_team_infra__deploy"},
		{"real lit dotted", "mcp__lit__literature.search_pubmed", "mcp__lit__literature_search_pubmed_1nv53db", "1nv53db", "mcp__lit__literature.search_pubmed"},
		{"real CJK", "mcp__lit__搜索文献", "mcp__lit_______0s19gpv", "0s19gpv", "mcp__lit______"},
		{"real enterprise", "mcp__com.example.enterprise-search__query_documents_by_semantic_similarity", "mcp__com_example_enterprise-search__query_documents_by__10hvo5y", "10hvo5y", "mcp__com.example.enterprise-___documents_by_semantic_similarity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.normalized, Normalize(tt.in))
			assert.Equal(t, tt.hash, Hash(tt.in))
			assert.Equal(t, tt.legacy, Legacy(tt.in))
		})
	}
}

func TestHashTextPadding(t *testing.T) {
	assert.Equal(t, "0000000", HashText(0))
	assert.Equal(t, "0000010", HashText(36))
	assert.Equal(t, "1z141z3", HashText(^uint32(0)))
}

var safeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// checkInvariants asserts the properties naming.md §2 requires of any input.
func checkInvariants(t testing.TB, in string) {
	t.Helper()
	out := Normalize(in)
	if !safeRE.MatchString(out) || len(out) > MaxLength {
		t.Fatalf("Normalize(%q) = %q is not provider-safe", in, out)
	}
	if Normalize(out) != out {
		t.Fatalf("Normalize not idempotent on %q: %q -> %q", in, out, Normalize(out))
	}
	if IsProviderSafe(in) {
		if out != in {
			t.Fatalf("provider-safe %q changed to %q", in, out)
		}
	} else {
		want := "_" + Hash(in)
		if !strings.HasSuffix(out, want) {
			t.Fatalf("Normalize(%q) = %q lacks the hash of the original %q", in, out, want)
		}
		if body := Sanitize(in); len(body) <= 55 && out != body+want {
			t.Fatalf("Normalize(%q) = %q, want whole body %q + %q", in, out, body, want)
		}
		if len(Sanitize(in)) >= 55 && len(out) != MaxLength {
			t.Fatalf("Normalize(%q) = %q is not 63 long", in, out)
		}
	}
	leg := Legacy(in)
	if Len(in) > MaxLength {
		if len(leg) != MaxLength || leg[28:31] != "___" {
			t.Fatalf("Legacy(%q) = %q is not middle-truncated", in, leg)
		}
	} else if len(leg) != Len(in) {
		t.Fatalf("Legacy(%q) = %q changed the length", in, leg)
	}
	if HasPrefix(in) {
		if NormalizeMcp(in) != out {
			t.Fatalf("NormalizeMcp(%q) != Normalize", in)
		}
	} else if NormalizeMcp(in) != in {
		t.Fatalf("NormalizeMcp(%q) touched a non-MCP name", in)
	}
	c := Classify(in, nil)
	if c.Registered != NormalizeMcp(in) {
		t.Fatalf("Classify(%q).Registered = %q", in, c.Registered)
	}
}

func TestPropertiesOnVectors(t *testing.T) {
	for _, r := range loadVectors(t) {
		checkInvariants(t, r.Raw)
		checkInvariants(t, r.Normalized)
		checkInvariants(t, r.Legacy)
	}
}

func TestDottedAndUnderscoredTwinsNeverCollide(t *testing.T) {
	pairs := [][2]string{
		{"mcp__foo.bar__evil", "mcp__foo_bar__evil"},
		{"mcp__lit__literature.search_pubmed", "mcp__lit__literature_search_pubmed"},
		{"mcp__a.b__c.d", "mcp__a_b__c_d"},
	}
	for _, p := range pairs {
		assert.NotEqual(t, Normalize(p[0]), Normalize(p[1]), "%q vs %q", p[0], p[1])
	}
}

func TestUnitsExactForLoneSurrogates(t *testing.T) {
	lone := []uint16{'m', 'c', 'p', '_', '_', 's', '_', '_', 0xd800, 'x'}
	replaced := utf16.Encode([]rune("mcp__s__\ufffdx"))
	// The hash is over the exact units, so a lone surrogate and U+FFFD hash differently.
	assert.NotEqual(t, NormalizeUnits(lone), NormalizeUnits(replaced))
	assert.Equal(t, "mcp__s___x_"+HashText(FNV1a32(lone)), NormalizeUnits(lone))
	c := ClassifyUnits(lone, nil)
	assert.Equal(t, ClassLegacyDotted, c.Class)
	assert.Equal(t, NormalizeUnits(lone), c.Registered)
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"", "mcp__lit__literature.search_pubmed", "mcp__lit__搜索文献", "🎉", "\xff\xfe",
		strings.Repeat("a", 64), "mcp__foo.bar__" + strings.Repeat("x", 80)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkInvariants(t, s)
		u := Units(s)
		if NormalizeUnits(u) != Normalize(s) || LegacyUnits(u) != Legacy(s) {
			t.Fatalf("units and string forms disagree on %q", s)
		}
	})
}
