package report

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Rows that share the old and the new name but not the note (a Codex name attributed from the
// thread history in one home and from a config.toml server key in another: scan --format json
// over two Codex homes) come out in the note's order every time, not in the map's: the JSON
// report and the text summary were different bytes from one run to the next (both binaries,
// c2c7f0a and main at 22:20; review9).
func TestSortedRowsOrderIsTotal(t *testing.T) {
	notes := []string{
		"raw identity foo-bar/deploy.prod from config.toml server key (E2 spelling)",
		"raw identity foo-bar/deploy.prod from thread history (thread_history_1.sqlite, E2 name)",
	}
	m := map[[3]string]*RenameRow{}
	for _, class := range []string{"codex-rejected", "codex-unattributed"} {
		for _, n := range notes {
			k := [3]string{"mcp__foo-bar__deploy.prod", "deploy_prod (namespace mcp__foo_bar)", class + n}
			m[k] = &RenameRow{Old: NameText{text: k[0]}, New: k[1], Class: class, Note: n, Count: 1}
		}
	}
	m[[3]string{"a", "b", ""}] = &RenameRow{Old: NameText{text: "a"}, New: "b", Class: "legacy-dotted", Count: 2}
	var want []string
	for i := 0; i < 64; i++ {
		var got []string
		for _, r := range SortedRows(m) {
			got = append(got, r.Old.text+"|"+r.New+"|"+r.Class+"|"+r.Note)
		}
		if want == nil {
			want = []string{
				"a|b|legacy-dotted|",
				"mcp__foo-bar__deploy.prod|deploy_prod (namespace mcp__foo_bar)|codex-rejected|" + notes[0],
				"mcp__foo-bar__deploy.prod|deploy_prod (namespace mcp__foo_bar)|codex-rejected|" + notes[1],
				"mcp__foo-bar__deploy.prod|deploy_prod (namespace mcp__foo_bar)|codex-unattributed|" + notes[0],
				"mcp__foo-bar__deploy.prod|deploy_prod (namespace mcp__foo_bar)|codex-unattributed|" + notes[1],
			}
		}
		require.Equal(t, want, got, "call %d", i)
	}
}
