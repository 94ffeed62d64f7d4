package opencodebench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSchemaIsTheFixtures: every statement of schema.sql is, byte for byte, one of the real
// dump's (Corpus.Fixture), so the bench database has opencode's real tables and indexes.
func TestSchemaIsTheFixtures(t *testing.T) {
	dump, err := os.ReadFile(filepath.Join("../../../fixtures", Corpus.Fixture))
	require.NoError(t, err)
	n := 0
	for _, stmt := range strings.Split(schema, ";\n") {
		i := strings.Index(stmt, "CREATE ")
		if i < 0 {
			continue
		}
		n++
		assert.True(t, strings.Contains(string(dump), stmt[i:]+";"), "schema.sql's statement is not in %s:\n%s", Corpus.Fixture, stmt[i:])
	}
	assert.Equal(t, 14, n, "6 tables and 8 indexes")
}
