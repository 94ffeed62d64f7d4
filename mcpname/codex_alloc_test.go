package mcpname

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allocatorSet is the input set of the allocator table of schemes.md §A.5, with the duplicate
// github/create_issue that must be dropped.
func allocatorSet() []CodexTool {
	return []CodexTool{
		{"github", "create_issue"},
		{"my-server", "search"},
		{"my_server", "search"},
		{"fs", "read.file"},
		{"fs", "read_file"},
		{"fs", "get-user"},
		{enterpriseServer, enterpriseTool},
		{"a", strings.Repeat("x", 60)},
		{"srv", "héllo"},
		{"mcp__already", "t"},
		{"github", "create_issue"},
	}
}

// TestCodexAllocatorTable is the allocator table of schemes.md §A.5 (#7–#16), every era column:
// namespace and name, the model string, and its length where the table gives one.
func TestCodexAllocatorTable(t *testing.T) {
	x43 := strings.Repeat("x", 43)
	type want struct{ ns, name, model string }
	tests := []struct {
		name string
		tool CodexTool
		e4   want // model = ns + name
		e5   want // model = ns + "__" + name
		e6   want
	}{
		{"#7", CodexTool{"github", "create_issue"},
			want{"mcp__github__", "create_issue", "mcp__github__create_issue"},
			want{"mcp__github", "create_issue", "mcp__github__create_issue"},
			want{"mcp__github", "create_issue", "mcp__github__create_issue"}},
		{"#8", CodexTool{"my-server", "search"},
			want{"mcp__my_server_ddbb953ab73e__", "search", "mcp__my_server_ddbb953ab73e__search"},
			want{"mcp__my_server_497a8b629ad2", "search", "mcp__my_server_497a8b629ad2__search"},
			want{"mcp__my_server_497a8b629ad2", "search", "mcp__my_server_497a8b629ad2__search"}},
		{"#9", CodexTool{"my_server", "search"},
			want{"mcp__my_server_e6ce6e52de9a__", "search", "mcp__my_server_e6ce6e52de9a__search"},
			want{"mcp__my_server_b7840dcbfd2d", "search", "mcp__my_server_b7840dcbfd2d__search"},
			want{"mcp__my_server_b7840dcbfd2d", "search", "mcp__my_server_b7840dcbfd2d__search"}},
		{"#10", CodexTool{"fs", "read.file"},
			want{"mcp__fs__", "read_file_a223d9b8d447", "mcp__fs__read_file_a223d9b8d447"},
			want{"mcp__fs", "read_file_5f50aebe2c3a", "mcp__fs__read_file_5f50aebe2c3a"},
			want{"mcp__fs", "read_file_5f50aebe2c3a", "mcp__fs__read_file_5f50aebe2c3a"}},
		{"#11", CodexTool{"fs", "read_file"},
			want{"mcp__fs__", "read_file_0359fc57f720", "mcp__fs__read_file_0359fc57f720"},
			want{"mcp__fs", "read_file_b6c21daaef54", "mcp__fs__read_file_b6c21daaef54"},
			want{"mcp__fs", "read_file_b6c21daaef54", "mcp__fs__read_file_b6c21daaef54"}},
		{"#12", CodexTool{"fs", "get-user"},
			want{"mcp__fs__", "get_user", "mcp__fs__get_user"},
			want{"mcp__fs", "get_user", "mcp__fs__get_user"},
			want{"mcp__fs", "get_user", "mcp__fs__get_user"}},
		{"#13", CodexTool{enterpriseServer, enterpriseTool},
			want{"mcp__enterprise_database_management__", "synchronize_al_2f7ff1f9991f",
				"mcp__enterprise_database_management__synchronize_al_2f7ff1f9991f"},
			want{"mcp__enterprise_database_management", "synchronize_al_9b6706630645",
				"mcp__enterprise_database_management__synchronize_al_9b6706630645"},
			want{"mcp__enterprise_database_management", "synchronize_all_customer_data_across_multiple_systems",
				"mcp__enterprise_database_management__synchronize_all_customer_data_across_multiple_systems"}},
		{"#14", CodexTool{"a", strings.Repeat("x", 60)},
			want{"mcp__a__", x43 + "_663f743dc9d4", "mcp__a__" + x43 + "_663f743dc9d4"},
			want{"mcp__a", x43 + "_b93c48194c27", "mcp__a__" + x43 + "_b93c48194c27"},
			want{"mcp__a", strings.Repeat("x", 60), "mcp__a__" + strings.Repeat("x", 60)}},
		{"#15", CodexTool{"srv", "héllo"},
			want{"mcp__srv__", "h_llo", "mcp__srv__h_llo"},
			want{"mcp__srv", "h_llo", "mcp__srv__h_llo"},
			want{"mcp__srv", "h_llo", "mcp__srv__h_llo"}},
		{"#16", CodexTool{"mcp__already", "t"},
			want{"mcp__mcp__already__", "t", "mcp__mcp__already__t"},
			want{"mcp__already", "t", "mcp__already__t"},
			want{"mcp__already", "t", "mcp__already__t"}},
	}
	eras := []struct {
		era CodexEra
		p   CodexParams
		got map[CodexTool]CodexName
	}{
		{era: CodexE4, p: CodexE4Params()},
		{era: CodexE5, p: CodexE5Params()},
		{era: CodexE6, p: CodexE6Params()},
	}
	for i := range eras {
		eras[i].got = CodexAllocate(allocatorSet(), eras[i].p)
		require.Len(t, eras[i].got, 10, "%s: the duplicate github/create_issue is dropped", eras[i].era)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, w := range []want{tt.e4, tt.e5, tt.e6} {
				e := eras[i]
				n, ok := e.got[tt.tool]
				require.True(t, ok, "%s: %v not allocated", e.era, tt.tool)
				assert.Equal(t, CodexName{w.ns, w.name}, n, "%s", e.era)
				assert.Equal(t, w.model, e.p.ModelName(n), "%s model string", e.era)
				assert.LessOrEqual(t, len(e.p.ModelName(n)), e.p.Max, "%s", e.era)
			}
		})
	}
	// Lengths stated in the table.
	assert.Len(t, eras[0].p.ModelName(eras[0].got[CodexTool{"github", "create_issue"}]), 25)
	assert.Len(t, eras[0].p.ModelName(eras[0].got[CodexTool{"my-server", "search"}]), 35)
	assert.Len(t, eras[0].p.ModelName(eras[0].got[CodexTool{enterpriseServer, enterpriseTool}]), 64)
	assert.Len(t, eras[1].got[CodexTool{enterpriseServer, enterpriseTool}].Flat(), 64)
	assert.Len(t, eras[1].got[CodexTool{"a", strings.Repeat("x", 60)}].Flat(), 64)
	assert.Len(t, eras[2].got[CodexTool{enterpriseServer, enterpriseTool}].Flat(), 90)
	assert.Len(t, eras[2].got[CodexTool{"a", strings.Repeat("x", 60)}].Flat(), 68)
}

// TestCodexAllocatorLongServers covers §A.5 #17 (E5/E6) and #18 (E4): the namespace alone is
// too long, so it is cut and the name is the bare suffix.
func TestCodexAllocatorLongServers(t *testing.T) {
	s70 := strings.Repeat("s", 70)
	tests := []struct {
		name     string
		server   string
		p        CodexParams
		want     CodexName
		flat     string
		modelLen int
	}{
		{"#17 E5", s70, CodexE5Params(),
			CodexName{"mcp__" + strings.Repeat("s", 44), "_3480dfd198b9"},
			"mcp__" + strings.Repeat("s", 44) + "__3480dfd198b9", 64},
		{"#17 E6", s70, CodexE6Params(),
			// The spec writes "(77+2)"; the namespace is 75 bytes, so the joined string is 81.
			CodexName{"mcp__" + s70, "tool"}, "mcp__" + s70 + "__tool", 81},
		{"#18 E4", strings.Repeat("s", 60), CodexE4Params(),
			CodexName{"mcp__" + strings.Repeat("s", 46), "_99b5186fb2fe"},
			"mcp__" + strings.Repeat("s", 46) + "__99b5186fb2fe", 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := CodexTool{tt.server, "tool"}
			got := CodexAllocate([]CodexTool{tool}, tt.p)
			assert.Equal(t, tt.want, got[tool])
			assert.Equal(t, tt.flat, got[tool].Flat())
			assert.Len(t, tt.p.ModelName(got[tool]), tt.modelLen)
		})
	}
	// #17 E5: the flat spelling is 63 bytes and the namespace 49.
	n := CodexAllocate([]CodexTool{{s70, "tool"}}, CodexE5Params())[CodexTool{s70, "tool"}]
	assert.Len(t, n.Flat(), 63)
	assert.Len(t, n.Namespace, 49)
	// #18 E4: the cut namespace has no trailing "__", so the flat spelling is one byte longer
	// than the 64-byte model string.
	s60 := CodexTool{strings.Repeat("s", 60), "tool"}
	assert.Len(t, CodexAllocate([]CodexTool{s60}, CodexE4Params())[s60].Flat(), 65)
}

// TestCodexAllocatorNonPrefixed is §A.5 #19: E6 with non_prefixed_mcp_tool_servers = [github].
func TestCodexAllocatorNonPrefixed(t *testing.T) {
	p := CodexE6Params("github")
	got := CodexAllocate(allocatorSet(), p)
	gh := got[CodexTool{"github", "create_issue"}]
	assert.Equal(t, CodexName{"github", "create_issue"}, gh)
	assert.Equal(t, "github__create_issue", p.ModelName(gh))
	assert.Equal(t, CodexName{"mcp__fs", "read_file_5f50aebe2c3a"}, got[CodexTool{"fs", "read.file"}],
		"fs/read.file is unaffected")
	// Without the list every namespace is prefixed.
	assert.Equal(t, "mcp__github", CodexAllocate(allocatorSet(), CodexE6Params())[CodexTool{"github", "create_issue"}].Namespace)
	// With the prefix off altogether (feature non_prefixed_mcp_tool_names, no list).
	off := CodexE6Params()
	off.AddPrefix = false
	assert.Equal(t, CodexName{"my_server_497a8b629ad2", "search"},
		CodexAllocate(allocatorSet(), off)[CodexTool{"my-server", "search"}])
}

// TestCodexHashInputs checks every "hash input" line of schemes.md §A.5 step by step: the
// identity strings the parameters build and their full SHA-1.
func TestCodexHashInputs(t *testing.T) {
	e4, e5 := CodexE4Params(), CodexE5Params()
	tests := []struct {
		name, input, sha1 string
	}{
		{"E5 NS_ID my-server", e5.NamespaceID("my-server"), "497a8b629ad27ca902e6d71a1c809c829992cc19"},
		{"E4 NS_ID my-server", e4.NamespaceID("my-server"), "ddbb953ab73ea659e97d7909986bfb0c4e45eae8"},
		{"E5 TOOL_ID fs/read.file", e5.ToolID(CodexTool{"fs", "read.file"}), "5f50aebe2c3a6e8d3b7c453c3f4c688c40db65b8"},
		{"E4 TOOL_ID fs/read.file", e4.ToolID(CodexTool{"fs", "read.file"}), "a223d9b8d447a16979fda324d0eb61812988b6e6"},
		{"E5 TOOL_ID fs/read_file", e5.ToolID(CodexTool{"fs", "read_file"}), "b6c21daaef542e10998e2bf15ad0c6d529927eb4"},
		{"E2/E3 raw a/x×60", Prefix + "a__" + strings.Repeat("x", 60), "ec68a9cd8e0305985e6a5653b7b62bef81a124f8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.sha1, codexSHA1Hex(tt.input))
		})
	}
	// The identity strings themselves, spelled out as in the spec.
	assert.Equal(t, "my-server\x00my-server\x00", e5.NamespaceID("my-server"))
	assert.Equal(t, "my-server\x00mcp__my-server__\x00", e4.NamespaceID("my-server"))
	assert.Equal(t, "fs\x00fs\x00\x00read.file\x00read.file", e5.ToolID(CodexTool{"fs", "read.file"}))
	assert.Equal(t, "fs\x00mcp__fs__\x00\x00read.file\x00read.file", e4.ToolID(CodexTool{"fs", "read.file"}))
	assert.Equal(t, "_497a8b629ad2", codexSuffix(e5.NamespaceID("my-server")))
}

func TestCodexParamsFor(t *testing.T) {
	tests := []struct {
		era  CodexEra
		want CodexParams
	}{
		{CodexE4, CodexParams{Max: 64, LegacyNamespace: true}},
		{CodexE4b, CodexParams{Max: 64, LegacyNamespace: true}},
		{CodexE5, CodexParams{Max: 64, Join: "__", AddPrefix: true}},
		{CodexE6, CodexParams{Max: 128, Join: "__", AddPrefix: true, NonPrefixedServers: []string{}}},
	}
	for _, tt := range tests {
		t.Run(string(tt.era), func(t *testing.T) {
			p, err := CodexParamsFor(tt.era)
			require.NoError(t, err)
			assert.Equal(t, tt.want.Max, p.Max)
			assert.Equal(t, tt.want.Join, p.Join)
			assert.Equal(t, len(tt.want.Join), p.Reserved())
			assert.Equal(t, tt.want.LegacyNamespace, p.LegacyNamespace)
			assert.Equal(t, tt.want.AddPrefix, p.AddPrefix)
			assert.Empty(t, p.NonPrefixedServers)
		})
	}
	for _, era := range []CodexEra{CodexE0, CodexE1, CodexE2, CodexE3, "E9"} {
		_, err := CodexParamsFor(era)
		require.ErrorIs(t, err, ErrCodexEra, string(era))
	}
	// The preset copies its list: changing the caller's slice later changes nothing.
	list := []string{"web"}
	p := CodexE6Params(list...)
	list[0] = "other"
	assert.Equal(t, []string{"web"}, p.NonPrefixedServers)
}

func TestCodexNameForms(t *testing.T) {
	tests := []struct {
		name                 string
		n                    CodexName
		concat, joined, flat string
	}{
		{"E5", CodexName{"mcp__fs", "read_file"}, "mcp__fsread_file", "mcp__fs__read_file", "mcp__fs__read_file"},
		{"E4", CodexName{"mcp__fs__", "read_file"}, "mcp__fs__read_file", "mcp__fs____read_file", "mcp__fs__read_file"},
		{"bare suffix name", CodexName{"mcp__ss", "_3480dfd198b9"}, "mcp__ss_3480dfd198b9", "mcp__ss___3480dfd198b9", "mcp__ss__3480dfd198b9"},
		{"all-underscore name", CodexName{"mcp__lit", "____"}, "mcp__lit____", "mcp__lit______", "mcp__lit__"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.concat, tt.n.Concat())
			assert.Equal(t, tt.joined, tt.n.Joined())
			assert.Equal(t, tt.flat, tt.n.Flat())
		})
	}
}

// TestCodexJoinedCanCollide pins an upstream property: uniqueness is kept on namespace+name,
// so two tools can share the E5/E6 joined string while their (namespace, name) pairs differ.
func TestCodexJoinedCanCollide(t *testing.T) {
	a, b := CodexTool{"a", "b__c"}, CodexTool{"a__b", "c"}
	got := CodexAllocate([]CodexTool{a, b}, CodexE5Params())
	assert.Equal(t, CodexName{"mcp__a", "b__c"}, got[a])
	assert.Equal(t, CodexName{"mcp__a__b", "c"}, got[b])
	assert.Equal(t, got[a].Joined(), got[b].Joined())
	assert.NotEqual(t, got[a].Concat(), got[b].Concat())
}

// TestCodexAllocatorAttempts forces the retry loop: a tool whose plain name equals another
// tool's first hashed name must move on to SUFFIX(TOOL_ID NUL 1).
func TestCodexAllocatorAttempts(t *testing.T) {
	p := CodexParams{Max: 30, Join: "__", AddPrefix: true}
	long := CodexTool{"s", strings.Repeat("y", 40)} // "mcp__s" + 40 y: too long, hashed
	first := CodexAllocate([]CodexTool{long}, p)[long]
	require.True(t, strings.HasSuffix(first.Name, codexSuffix(p.ToolID(long))))
	// A second tool on the same server whose raw name is exactly that hashed name ("yyyyyyyyy_…"):
	// '_' sorts before 'y', so its TOOL_ID comes first and it claims the name before the long tool.
	squat := CodexTool{"s", first.Name}
	require.Less(t, p.ToolID(squat), p.ToolID(long), "the squatter must be allocated first")
	got := CodexAllocate([]CodexTool{long, squat}, p)
	assert.Equal(t, first, got[squat], "the squatter keeps its plain name")
	retry := p.fitWithSuffix("mcp__s", strings.Repeat("y", 40), codexSuffix(p.ToolID(long)+"\x001"))
	assert.Equal(t, retry, got[long], "the long tool takes attempt 1")
	assert.NotEqual(t, got[squat], got[long])
}

// codeModeSafe is the charset every Codex E4+ model string keeps (schemes.md §A.2).
var codeModeSafe = regexp.MustCompile(`^[a-zA-Z0-9_]+$`)

// checkAllocation asserts the allocator's invariants on one tool set: every distinct input is
// named, names are safe and within Max, and distinct tools never share a final name.
func checkAllocation(t testing.TB, tools []CodexTool, p CodexParams) map[CodexTool]CodexName {
	t.Helper()
	got := CodexAllocate(tools, p)
	distinct := map[CodexTool]bool{}
	for _, tool := range tools {
		distinct[tool] = true
	}
	if len(got) != len(distinct) {
		t.Fatalf("allocated %d names for %d distinct tools", len(got), len(distinct))
	}
	concat := map[string]CodexTool{}
	for tool, n := range got {
		if !distinct[tool] {
			t.Fatalf("allocated a name for %v, which is not an input", tool)
		}
		model := p.ModelName(n)
		if !codeModeSafe.MatchString(model) || len(model) > p.Max {
			t.Fatalf("%v: model name %q is not safe within %d", tool, model, p.Max)
		}
		// The flat spelling never exceeds the model string in E5/E6; in E4 a cut namespace
		// loses its trailing "__", so the flat form can be one byte longer (§A.5 #18).
		flatMax := p.Max
		if p.Join == "" {
			flatMax++
		}
		if !CodexNameAccepted(model, p.Max) || !codeModeSafe.MatchString(n.Flat()) || len(n.Flat()) > flatMax {
			t.Fatalf("%v: %q / flat %q not accepted", tool, model, n.Flat())
		}
		if n.Namespace == "" || n.Name == "" {
			t.Fatalf("%v: empty part in %+v", tool, n)
		}
		if other, dup := concat[n.Concat()]; dup {
			t.Fatalf("%v and %v share %q", tool, other, n.Concat())
		}
		concat[n.Concat()] = tool
	}
	return got
}

func TestCodexAllocatorOrderIndependent(t *testing.T) {
	tools := append(allocatorSet(), CodexTool{strings.Repeat("s", 70), "tool"}, CodexTool{"a", "b__c"},
		CodexTool{"a__b", "c"}, CodexTool{"fs", "read-file"})
	for _, p := range []CodexParams{CodexE4Params(), CodexE5Params(), CodexE6Params(), CodexE6Params("github", "fs")} {
		want := checkAllocation(t, tools, p)
		rev := slices.Clone(tools)
		slices.Reverse(rev)
		assert.Equal(t, want, checkAllocation(t, rev, p))
		rot := append(slices.Clone(tools[5:]), tools[:5]...)
		assert.Equal(t, want, checkAllocation(t, rot, p))
	}
}

// FuzzCodexAllocate: the allocation is deterministic, independent of input order, every
// model-visible name is [a-zA-Z0-9_]+ within MAX, and distinct raw identities never share a
// final name. The input is lines "server\ttool"; servers are filtered to Codex's config gate.
func FuzzCodexAllocate(f *testing.F) {
	f.Add("github\tcreate_issue\nmy-server\tsearch\nmy_server\tsearch\nfs\tread.file\nfs\tread_file", uint8(0))
	f.Add("lit\tliterature.search_pubmed\nlit\tliterature_search_pubmed\nlit\t搜索文献\nfoo-bar\tget_data", uint8(2))
	f.Add(strings.Repeat("s", 70)+"\ttool\na\t"+strings.Repeat("x", 60)+"\nmcp__already\tt", uint8(1))
	f.Add("a\tb__c\na__b\tc\nx\t\nx\t_\nx\t-", uint8(3))
	f.Fuzz(func(t *testing.T, data string, sel uint8) {
		var tools []CodexTool
		for line := range strings.SplitSeq(data, "\n") {
			server, tool, _ := strings.Cut(line, "\t")
			if CodexServerNameValid(server) {
				tools = append(tools, CodexTool{server, tool})
			}
		}
		var p CodexParams
		switch sel % 4 {
		case 0:
			p = CodexE4Params()
		case 1:
			p = CodexE5Params()
		case 2:
			p = CodexE6Params()
		default:
			p = CodexE6Params("a", "x", "github")
		}
		got := checkAllocation(t, tools, p)
		rev := slices.Clone(tools)
		slices.Reverse(rev)
		again := CodexAllocate(rev, p)
		if len(again) != len(got) {
			t.Fatalf("reversed input gave %d names, want %d", len(again), len(got))
		}
		for tool, n := range got {
			if again[tool] != n {
				t.Fatalf("%v: %+v forward, %+v reversed", tool, n, again[tool])
			}
		}
	})
}
