package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

type oomResult struct {
	Err   string
	Sites int
	Empty int
}

// TestRowReaderOutOfMemory: an allocation failure inside sqlite3_column_text (the UTF-16 → UTF-8
// conversion of a large value, under SQLite's hard heap limit) is an error of the scan, never
// a row read as an empty value — also when that row is the last of a full batch, where the
// next query's sqlite3_reset would clear the statement's error. Each heap limit runs in a
// child process (the limit is process-wide and cannot be raised again).
func TestRowReaderOutOfMemory(t *testing.T) {
	prof := &Profile{Name: "oom", Agent: "opencode", Tables: []TableSpec{
		{Table: "part", Column: "data", Sites: []SiteSpec{{Path: "$.tool", Kind: "call"}}}}}
	if path := os.Getenv("SESSIONFIX_OOM_DB"); path != "" {
		fastDisabled = true
		db, err := sql.Open("sqlite3", ":memory:")
		require.NoError(t, err)
		_, err = db.Exec("PRAGMA hard_heap_limit=" + os.Getenv("SESSIONFIX_OOM_LIMIT"))
		require.NoError(t, err)
		var res oomResult
		snap, err := OpenWith(path, prof, Options{}).Scan(context.Background(), store.ScanOptions{})
		if err != nil {
			res.Err = err.Error()
		} else {
			res.Sites = len(snap.Sites)
			for _, p := range snap.Problems {
				if strings.Contains(p.Reason, "empty document") {
					res.Empty++
				}
			}
		}
		b, _ := json.Marshal(res)
		fmt.Printf("OOMRESULT %s\n", b)
		return
	}
	path := filepath.Join(t.TempDir(), "utf16.db")
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	_, err = db.Exec(`PRAGMA encoding='UTF-16le'; CREATE TABLE part (id TEXT PRIMARY KEY, data TEXT)`)
	require.NoError(t, err)
	tx, err := db.Begin()
	require.NoError(t, err)
	for i := range batchRows - 1 {
		_, err = tx.Exec(`INSERT INTO part VALUES (?, ?)`, fmt.Sprintf("p%04d", i), `{"tool":"a.b"}`)
		require.NoError(t, err)
	}
	_, err = tx.Exec(`INSERT INTO part VALUES ('zz', ?)`, `{"pad":"`+strings.Repeat("x", 4<<20)+`","tool":"a.b"}`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	require.NoError(t, db.Close())
	kinds := map[string]int{}
	for mb := 2; mb <= 40; mb += 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRowReaderOutOfMemory$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SESSIONFIX_OOM_DB="+path, fmt.Sprintf("SESSIONFIX_OOM_LIMIT=%d", mb<<20))
		out, _ := cmd.CombinedOutput()
		_, line, ok := strings.Cut(string(out), "OOMRESULT ")
		require.True(t, ok, "child output: %s", out)
		line, _, _ = strings.Cut(line, "\n")
		var res oomResult
		require.NoError(t, json.Unmarshal([]byte(line), &res))
		switch {
		case res.Err != "":
			if kinds["error"] == 0 {
				t.Logf("heap limit %d MiB: %s", mb, res.Err)
			}
			kinds["error"]++
		case res.Sites == batchRows && res.Empty == 0:
			kinds["whole"]++
		default:
			kinds["wrong"]++
			assert.Fail(t, "a row read wrong under an allocation failure", "heap limit %d MiB: %d sites of %d, %d rows read as empty", mb, res.Sites, batchRows, res.Empty)
		}
	}
	t.Logf("heap limits 2..40 MiB: %v", kinds)
	assert.Positive(t, kinds["error"], "some limit fails the scan")
	assert.Positive(t, kinds["whole"], "some limit lets it through")
}
