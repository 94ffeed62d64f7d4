package mcpname

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDSHPublicName is the vector table of schemes.md §B.3 (#1–#13) with the stated lengths.
func TestDSHPublicName(t *testing.T) {
	tests := []struct {
		name, server, raw, want string
		units                   int
	}{
		{"#1", "github", "create_issue", "mcp__github__create_issue", 25},
		{"#2 hyphen legal, no hash", "my-server", "get-user", "mcp__my-server__get-user", 24},
		{"#3", "fs", "read.file", "mcp__fs__read_file_a70c27002fc8", 31},
		{"#4", "github", "get.me", "mcp__github__get_me_e1d9d12cf09b", 32},
		{"#5 distinct from #4", "github", "get_me", "mcp__github__get_me", 19},
		{"#6", "srv", "tool name with spaces", "mcp__srv__tool_name_with_spaces_fdfc4ce454cb", 44},
		{"#7 exactly 64, clean", "x", strings.Repeat("a", 56), "mcp__x__" + strings.Repeat("a", 56), 64},
		{"#8", "x", strings.Repeat("a", 57), "mcp__x__" + strings.Repeat("a", 43) + "_dcdae049e14e", 64},
		{"#9", "a", strings.Repeat("x", 60), "mcp__a__" + strings.Repeat("x", 43) + "_cd632357a2c1", 64},
		{"#10", "srv", "héllo", "mcp__srv__h_llo_69aafb962afa", 28},
		{"#11 emoji is two units", "srv", "🚀launch", "mcp__srv____launch_479a0680ce62", 31},
		{"#12", enterpriseServer, enterpriseTool, "mcp__enterprise-database-management__synchronize-al_00414678f001", 64},
		{"#13 no de-dup of prefix", "mcp__already", "t", "mcp__mcp__already__t", 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DSHPublicName(tt.server, tt.raw)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.units, Len(got))
			assert.True(t, CodexNameAccepted(got, DSHMaxLength), "DSH names fit the 64 rule")
		})
	}
}

// TestDSHHashInput is the hash-input example of §B.3.
func TestDSHHashInput(t *testing.T) {
	sum := sha256.Sum256([]byte("fs\x00read.file"))
	h := hex.EncodeToString(sum[:])
	assert.True(t, strings.HasPrefix(h, "a70c27002fc8cfaedcb3"), h)
	assert.True(t, strings.HasSuffix(h, "6269"), h)
	assert.Equal(t, "mcp__fs__read_file_"+h[:DSHHashLength], DSHPublicName("fs", "read.file"))
}

func TestDSHHashedLengths(t *testing.T) {
	// A lossy change forces the hash even when short; a hashed name is 64 units once the
	// sanitized name has at least 51.
	assert.Len(t, DSHPublicName("s", "a.b"), len("mcp__s__a_b")+1+DSHHashLength)
	assert.Len(t, DSHPublicName("s", strings.Repeat("é", 80)), DSHMaxLength)
	assert.Equal(t, DSHHeadLength, 51)
}

// FuzzDSHPublicName: a public name always satisfies the 64-unit provider rule, is kept verbatim
// exactly when it already did, and otherwise ends in "_" + 12 hex digits.
func FuzzDSHPublicName(f *testing.F) {
	for _, s := range [][2]string{{"fs", "read.file"}, {"srv", "🚀launch"}, {"x", strings.Repeat("a", 57)},
		{"a", "\xff\xfe"}, {"", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, server, raw string) {
		got := DSHPublicName(server, raw)
		if !CodexNameAccepted(got, DSHMaxLength) {
			t.Fatalf("DSHPublicName(%q, %q) = %q breaks ^[A-Za-z0-9_-]{1,64}$", server, raw, got)
		}
		joined := Prefix + server + "__" + raw
		verbatim := CodexNameAccepted(joined, DSHMaxLength)
		if verbatim != (got == joined) {
			t.Fatalf("DSHPublicName(%q, %q) = %q: verbatim %v", server, raw, got, verbatim)
		}
		if !verbatim && (len(got) < 13 || got[len(got)-13] != '_' ||
			strings.Trim(got[len(got)-12:], "0123456789abcdef") != "") {
			t.Fatalf("DSHPublicName(%q, %q) = %q lacks the hash suffix", server, raw, got)
		}
		// Claude Code names keep the charset but neither length nor content: one unit per unit.
		if c := ClaudeName(server, raw); !CodexNameAccepted(c, len(c)) || len(c) != Len(joined) && !strings.HasPrefix(server, claudeAIServerPrefix) && !strings.HasPrefix(raw, claudeAIServerPrefix) {
			t.Fatalf("ClaudeName(%q, %q) = %q: charset or unit count broken", server, raw, c)
		}
	})
}
