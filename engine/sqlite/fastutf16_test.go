package sqlite_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/opencode"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
)

// TestFastPathAgreesWithLexerUTF16: in a UTF-16 database SQLite converts each TEXT value to UTF-8 both
// for sessionfix_extract and for the row reader; the offsets the one gives must fit the bytes the
// other reads: the edge rows give the same sites and problems with the SQL-assisted path as
// with the lexer.
func TestFastPathAgreesWithLexerUTF16(t *testing.T) {
	var b strings.Builder
	b.WriteString("sql:PRAGMA encoding='UTF-16le';\nCREATE TABLE session (id TEXT PRIMARY KEY, permission TEXT);\nCREATE TABLE message (id TEXT PRIMARY KEY, data TEXT);\n")
	b.WriteString("CREATE TABLE part (id TEXT PRIMARY KEY, session_id TEXT, data TEXT);\nCREATE TABLE event (id TEXT PRIMARY KEY, aggregate_id TEXT, type TEXT, data TEXT);\nBEGIN;\n")
	for i, v := range fastEdgeRows {
		fmt.Fprintf(&b, "INSERT INTO part VALUES ('p%02d', 's1', %s);\n", i, v)
	}
	b.WriteString("COMMIT;\n")
	db := buildDB(t, "edge16.db", b.String())
	scan := func(fast bool) *store.Snapshot {
		defer sqlite.SetFastPath(fast)()
		snap, err := sqlite.OpenWith(db, opencode.Profile, sqlite.Options{}).Scan(context.Background(), store.ScanOptions{})
		require.NoError(t, err)
		return snap
	}
	fast, full := scan(true), scan(false)
	assert.Equal(t, full.Sites, fast.Sites)
	assert.Equal(t, full.Problems, fast.Problems)
	assert.Positive(t, len(full.Sites))
	assert.Positive(t, sqlite.FastRows(fast))
}
