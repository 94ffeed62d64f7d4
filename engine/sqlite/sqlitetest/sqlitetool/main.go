// Command sqlitetool builds, digests, checks and locks SQLite databases for the demo
// (scripts/demo.sh; CI has no sqlite3 shell):
//
//	sqlitetool build OUT.db SCRIPT.sql...   create OUT.db (WAL) from SQL text such as a .dump
//	sqlitetool dump DB                      the deterministic .dump of DB (store/sqlitetest.Dump)
//	sqlitetool sha256 DB                    the SHA-256 of that dump
//	sqlitetool check DB                     PRAGMA integrity_check
//	sqlitetool lock DB SECONDS              hold DB's write lock, as a running agent would
//
// It uses only the exported API of engine/sqlite and engine/sqlite/sqlitetest, and knows no agent
// (an agent's benchmark database: `go run ./cmd/sessionfix-bench -generate-sqlite DB -parts N`).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sqlitetool:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: sqlitetool build|dump|sha256|check|lock DB [ARGS]")
	}
	db := args[1]
	switch args[0] {
	case "build":
		var scripts []io.Reader
		for _, p := range args[2:] {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			scripts = append(scripts, f)
		}
		return sqlitetest.BuildFromSQL(ctx, db, true, scripts...)
	case "dump":
		return sqlitetest.Dump(ctx, db, out)
	case "sha256":
		sum, err := sqlitetest.DumpSHA256(ctx, db)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, sum)
		return err
	case "check":
		res, err := sqlite.IntegrityCheck(ctx, db)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, res)
		return err
	case "lock":
		secs := 10.0
		if len(args) > 2 {
			var err error
			if secs, err = strconv.ParseFloat(args[2], 64); err != nil {
				return err
			}
		}
		l, err := sqlitetest.HoldWriteLock(ctx, db, sqlite.DefaultBusyTimeout)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, "locked")
		time.Sleep(time.Duration(secs * float64(time.Second)))
		return l.Release()
	}
	return fmt.Errorf("unknown command %q", args[0])
}
