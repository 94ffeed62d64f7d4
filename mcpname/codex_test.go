package mcpname

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Long tool of schemes.md §A.5 vectors #5 and #13.
const (
	enterpriseServer = "enterprise-database-management"
	enterpriseTool   = "synchronize-all-customer-data-across-multiple-systems"
)

func TestCodexSanitize(t *testing.T) {
	tests := []struct {
		name, in, e4, e3 string
	}{
		{"clean", "create_issue", "create_issue", "create_issue"},
		{"hyphen", "my-server", "my_server", "my-server"},
		{"dot", "read.file", "read_file", "read_file"},
		{"one scalar per underscore", "你好", "__", "__"},
		{"astral scalar is one underscore", "🚀launch", "_launch", "_launch"},
		{"accented", "héllo", "h_llo", "h_llo"},
		{"empty", "", "_", "_"},
		{"invalid byte counts as one scalar", "a\xffb", "a_b", "a_b"},
		{"four CJK scalars", "搜索文献", "____", "____"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.e4, CodexSanitize(tt.in))
			assert.Equal(t, tt.e3, CodexSanitizeE3(tt.in))
		})
	}
}

// TestCodexSingleToolEras is the first table of schemes.md §A.5 (vectors #1–#6), every column.
func TestCodexSingleToolEras(t *testing.T) {
	x60 := strings.Repeat("x", 60)
	tests := []struct {
		name, server, tool string
		e0, e1, e2, e3     string
	}{
		{"#1", "github", "create_issue", "github__OAI_CODEX_MCP__create_issue", "github__create_issue",
			"mcp__github__create_issue", "mcp__github__create_issue"},
		{"#2", "my-server", "get-user", "my-server__OAI_CODEX_MCP__get-user", "my-server__get-user",
			"mcp__my-server__get-user", "mcp__my-server__get-user"},
		{"#3", "fs", "read.file", "fs__OAI_CODEX_MCP__read.file", "fs__read.file",
			"mcp__fs__read.file", "mcp__fs__read_file"},
		{"#4", "a", x60, "a__OAI_CODEX_MCP__" + x60, "a__" + x60,
			"mcp__a__xxxxxxxxxxxxxxxx" + "ec68a9cd8e0305985e6a5653b7b62bef81a124f8",
			"mcp__a__xxxxxxxxxxxxxxxx" + "ec68a9cd8e0305985e6a5653b7b62bef81a124f8"},
		{"#5", enterpriseServer, enterpriseTool, enterpriseServer + "__OAI_CODEX_MCP__" + enterpriseTool,
			"enterprise-database-mana" + "6899e0b08164815f10790332979c0a867dfba13c",
			"mcp__enterprise-database" + "a02126b8b8bd3dfb8771332836325e77578b8721",
			"mcp__enterprise-database" + "a02126b8b8bd3dfb8771332836325e77578b8721"},
		{"#6", "srv", "héllo", "srv__OAI_CODEX_MCP__héllo", "srv__héllo", "mcp__srv__héllo", "mcp__srv__h_llo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.e0, CodexFlatE0(tt.server, tt.tool))
			e1, err := CodexFlatE1(tt.server, tt.tool)
			require.NoError(t, err)
			assert.Equal(t, tt.e1, e1)
			e2, err := CodexFlatE2(tt.server, tt.tool)
			require.NoError(t, err)
			assert.Equal(t, tt.e2, e2)
			assert.Equal(t, tt.e3, CodexFlatE3(tt.server, tt.tool))
			assert.LessOrEqual(t, len(e1), CodexFlatMax)
			assert.LessOrEqual(t, len(e2), CodexFlatMax)
		})
	}
	// #4 says E1 stays unchanged at 63 bytes; #4/#5 hashed names are exactly 64.
	e1, _ := CodexFlatE1("a", x60)
	assert.Len(t, e1, 63)
	assert.Len(t, CodexFlatE3(enterpriseServer, enterpriseTool), 64)
}

func TestCodexFlatCutInsideRune(t *testing.T) {
	// "mcp__lit__" is 10 bytes; 13 ASCII bytes then "é" puts bytes 23..24 on one character.
	tool := strings.Repeat("a", 13) + "é" + strings.Repeat("b", 60)
	_, err := CodexFlatE2("lit", tool)
	require.ErrorIs(t, err, ErrCodexCutInsideRune)
	// One byte earlier the character ends before the cut: no panic in Codex, a valid name here.
	name, err := CodexFlatE2("lit", strings.Repeat("a", 12)+"é"+strings.Repeat("b", 60))
	require.NoError(t, err)
	assert.Equal(t, "mcp__lit__aaaaaaaaaaaaé", name[:24])
	// E3 sanitizes before cutting, so the same tool is fine there.
	assert.Len(t, CodexFlatE3("lit", tool), 64)
}

// TestCodexQualifyFlatE3Batch is the E3 batch sentence of schemes.md §A.5.
func TestCodexQualifyFlatE3Batch(t *testing.T) {
	tools := []CodexTool{{"fs", "read.file"}, {"fs", "read_file"}, {"fs", "read.file"}}
	got, err := CodexQualifyFlat(CodexE3, tools)
	require.NoError(t, err)
	assert.Equal(t, []CodexFlatName{
		{Tool: tools[0], Name: "mcp__fs__read_file"},
		{Tool: tools[1], Dropped: CodexDropNameTaken},
		{Tool: tools[2], Dropped: CodexDropDuplicate},
	}, got)
}

func TestCodexQualifyFlatEras(t *testing.T) {
	tools := []CodexTool{{"a", "b__c"}, {"a__b", "c"}, {"fs", "read.file"}, {"fs", "read_file"},
		{"a", "b__c"}, {"lit", strings.Repeat("a", 13) + "é" + strings.Repeat("b", 60)}}
	tests := []struct {
		era  CodexEra
		want []CodexDrop
	}{
		{CodexE0, []CodexDrop{"", "", "", "", "", ""}},
		{CodexE1, []CodexDrop{"", CodexDropNameTaken, "", "", CodexDropDuplicate, ""}},
		{CodexE2, []CodexDrop{"", CodexDropNameTaken, "", "", CodexDropDuplicate, CodexDropPanic}},
		{CodexE3, []CodexDrop{"", CodexDropNameTaken, "", CodexDropNameTaken, CodexDropDuplicate, ""}},
	}
	for _, tt := range tests {
		t.Run(string(tt.era), func(t *testing.T) {
			got, err := CodexQualifyFlat(tt.era, tools)
			require.NoError(t, err)
			require.Len(t, got, len(tools))
			for i, r := range got {
				assert.Equal(t, tools[i], r.Tool)
				assert.Equal(t, tt.want[i], r.Dropped, "tool %d", i)
				assert.Equal(t, tt.want[i] == "", r.Name != "", "tool %d: a name iff kept", i)
			}
		})
	}
	_, err := CodexQualifyFlat(CodexE5, tools)
	require.ErrorIs(t, err, ErrCodexEra)
}

func TestCodexNameAccepted(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want bool
	}{
		{"clean", "mcp__github__create_issue", ResponsesNameMax, true},
		{"hyphen allowed by the API", "mcp__my-server__get-user", ChatCompletionsNameMax, true},
		{"dot", "mcp__fs__read.file", ResponsesNameMax, false},
		{"non-ASCII", "mcp__lit__搜索文献", ResponsesNameMax, false},
		{"empty", "", ResponsesNameMax, false},
		{"64 at 64", strings.Repeat("a", 64), ChatCompletionsNameMax, true},
		{"65 at 64", strings.Repeat("a", 65), ChatCompletionsNameMax, false},
		{"65 at 128", strings.Repeat("a", 65), ResponsesNameMax, true},
		{"129 at 128", strings.Repeat("a", 129), ResponsesNameMax, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, CodexNameAccepted(tt.in, tt.max))
		})
	}
}

func TestCodexServerNameValid(t *testing.T) {
	for _, ok := range []string{"lit", "foo-bar", "my_server", "A1"} {
		assert.True(t, CodexServerNameValid(ok), ok)
	}
	for _, bad := range []string{"", "foo.bar", "my server", "srv\x00", "é"} {
		assert.False(t, CodexServerNameValid(bad), bad)
	}
}

func TestCodexCallForm(t *testing.T) {
	tests := []struct {
		name, namespace, fn string
		form                CodexCallForm
		eras                []CodexEra
		stored              string
	}{
		{"flat E0–E4", "", "mcp__github__create_issue", CodexFormFlat,
			[]CodexEra{CodexE0, CodexE1, CodexE2, CodexE3, CodexE4}, "mcp__github__create_issue"},
		{"E4b trailing __", "mcp__github__", "create_issue", CodexFormE4b,
			[]CodexEra{CodexE4, CodexE4b}, "mcp__github__create_issue"},
		{"E5/E6", "mcp__github", "create_issue", CodexFormE5,
			[]CodexEra{CodexE5, CodexE6}, "mcp__github__create_issue"},
		{"E5 collided namespace", "mcp__my_server_497a8b629ad2", "search", CodexFormE5,
			[]CodexEra{CodexE5, CodexE6}, "mcp__my_server_497a8b629ad2__search"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := CodexCallFormOf(tt.namespace)
			assert.Equal(t, tt.form, f)
			assert.Equal(t, tt.eras, f.Eras())
			assert.Equal(t, tt.stored, CodexStoredName(tt.namespace, tt.fn))
		})
	}
	assert.Equal(t, "flat", CodexFormFlat.String())
	assert.Equal(t, "E4b", CodexFormE4b.String())
	assert.Equal(t, "E5", CodexFormE5.String())
	assert.Equal(t, "CodexCallForm(0)", CodexCallForm(0).String())
	assert.Nil(t, CodexCallForm(0).Eras())
}
