package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
)

// TestDumpRoundTrip: a database rebuilt from its dump dumps the same bytes, whatever its journal
// mode (the dump compares logical content, not pages).
func TestDumpRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		name    string
		scripts []string
	}{
		{"opencode", []string{opencodeReal, opencodeLegacy}},
		{"crush", []string{crushSQL}},
		{"codex state", []string{codexState}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := buildDB(t, "a.db", tt.scripts...)
			d := dumpText(t, p)
			q := filepath.Join(t.TempDir(), "b.db")
			require.NoError(t, sqlitetest.BuildFromSQL(context.Background(), q, false, strings.NewReader(d)))
			assert.Equal(t, d, dumpText(t, q))
			assert.Equal(t, "delete", queryString(t, q, "PRAGMA journal_mode"))
		})
	}
}

// TestDumpLiterals: every storage class is written exactly, one row per line.
func TestDumpLiterals(t *testing.T) {
	p := buildDB(t, "v.db", `sql:CREATE TABLE v (a, b);
INSERT INTO v VALUES (1, -9223372036854775808);
INSERT INTO v VALUES (1.0, 0.1);
INSERT INTO v VALUES (-2.5e-300, 1e300);
INSERT INTO v VALUES ('it''s', 'two
lines');
INSERT INTO v VALUES (X'00FF28B52FFD', NULL);
CREATE TABLE "odd name" (x TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT INTO "odd name" VALUES ('b'), ('a');
CREATE INDEX v_a ON v (a);`)
	assert.Equal(t, `PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE v (a, b);
INSERT INTO v VALUES(1,-9223372036854775808);
INSERT INTO v VALUES(1.0,0.1);
INSERT INTO v VALUES(-2.5e-300,1e+300);
INSERT INTO v VALUES('it''s','two'||char(10)||'lines');
INSERT INTO v VALUES(X'00FF28B52FFD',NULL);
CREATE TABLE "odd name" (x TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT INTO "odd name" VALUES('a');
INSERT INTO "odd name" VALUES('b');
CREATE INDEX v_a ON v (a);
COMMIT;
`, dumpText(t, p))
}
