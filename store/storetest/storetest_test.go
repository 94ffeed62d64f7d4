package storetest_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/all"
	"github.com/sessionfix/sessionfix/store/jsonl"
	"github.com/sessionfix/sessionfix/store/storetest"
)

// qwenSession is the real resumed Qwen Code session (0.12.0 legacy records followed by 0.24.4
// ones), copied fresh for each subtest.
func qwenSession(tb testing.TB) storetest.Fixture {
	tb.Helper()
	b, err := os.ReadFile("../../fixtures/qwen-real/dot-qwen/projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl")
	require.NoError(tb, err)
	p := filepath.Join(tb.TempDir(), "3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl")
	require.NoError(tb, os.WriteFile(p, b, 0o640))
	old := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	require.NoError(tb, os.Chtimes(p, old, old))
	return storetest.Fixture{
		Store:  jsonl.Open(p, jsonl.QwenSession),
		Reopen: all.Open,
		Digest: func(tb testing.TB) string {
			b, err := os.ReadFile(p)
			require.NoError(tb, err)
			s := sha256.Sum256(b)
			return hex.EncodeToString(s[:])
		},
		// A change inside what the run wrote (an append is undone in place, keeping it).
		Tamper: func(tb testing.TB, _ *store.Change) {
			b, err := os.ReadFile(p)
			require.NoError(tb, err)
			b = append([]byte(`{"uuid":"early","type":"user","message":{"role":"user","parts":[{"text":"inserted before"}]}}`+"\n"), b...)
			require.NoError(tb, os.WriteFile(p, b, 0o640))
		},
		// Qwen Code's rule: normalizeMcp of each stored name (naming.md §2).
		Rename: func(s store.Site) (string, bool) {
			if n := mcpname.NormalizeMcp(s.Name); s.Units == nil && n != s.Name {
				return n, true
			}
			return "", false
		},
		MinEdits: 10,
	}
}

func TestJSONLConformance(t *testing.T) { storetest.Run(t, qwenSession) }

func TestProviderSafeRule(t *testing.T) {
	tests := []struct {
		name string
		site store.Site
		want string
		ok   bool
	}{
		{"provider-safe kept", store.Site{Name: "lit_ok_tool"}, "", false},
		{"dotted normalized", store.Site{Name: "lit_literature.search_pubmed"}, mcpname.Normalize("lit_literature.search_pubmed"), true},
		{"read-only never", store.Site{Name: "deploy.prod", ReadOnly: true}, "", false},
		{"lone surrogate by units", store.Site{Name: "a\uFFFD", Units: []uint16{'a', 0xD800}}, mcpname.NormalizeUnits([]uint16{'a', 0xD800}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := storetest.ProviderSafe(tt.site)
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.want, got)
		})
	}
}
