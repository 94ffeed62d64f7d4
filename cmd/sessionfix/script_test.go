package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
)

// TestScripts runs the end-to-end scripts of testdata/script/*.txtar and of the agent rooms'
// agent/<agent>/testdata/script/*.txtar (scriptFiles): each is a shell-like
// session with the real command ("sessionfix" is this test binary, run as the command by
// TestMain through testscript.Main), its files embedded in the archive (or copied from the
// repository's fixtures/ through $FIXTURES), and checks of exit codes, stdout, stderr and files.
// Commands added here:
//
//	exits N CMD ARGS…   run CMD and want exit status N (stdout and stderr as for exec)
//	golden FILE NAME    FILE (or stdout, stderr) normalized equals testdata/golden/NAME; -update writes it
//	sqlitedb [-journal] DB SQL…  build the SQLite database DB (WAL; -journal: rollback journal) from SQL files, as `sqlite3 DB < SQL` does
//	append FILE TEXT    append TEXT and a newline to FILE (an agent writing a line)
//	replace FILE OLD NEW  replace the first OLD in FILE by NEW, both Go string literals
//	                    ("\xff" is one byte): a damaged byte in a copied genuine store
//	cpdir SRC DST       copy the tree SRC to DST (modes and mtimes kept, as cp -rp does)
//	sqldump DB OUT      write the SQL dump of DB (every table's rows, in order) to OUT
//	sqlitelock DB       hold DB's write lock (BEGIN IMMEDIATE, as a writing agent does) until
//	                    sqliteunlock DB or the end of the script
//	cmptree A B         the trees A and B hold the same files, byte for byte, with the same modes
//	                    and mtimes (! cmptree: they differ)
//	helpexamples        run every example of every --help with sh -c: each exits 0 or 5
//	lines FILE OP N     FILE (or stdout, stderr) has OP N lines, OP one of <=, >=, ==
//	mkuser, chownto, asuser, [root]   a second user (scriptuser_test.go)
//	sqlquery DB SQL     run SQL (statements ending with ";"; ATTACH works) on DB: the last query's
//	                    rows on stdout, one line each, values joined by "|" as the sqlite3 shell prints them
//
// Each script starts with HOME=$WORK/home, XDG_STATE_HOME=$WORK/state (the default run
// directory is $WORK/state/sessionfix), TZ=UTC, $FIXTURES (the repository's fixtures/), $REPO
// (the repository) and the go command's caches (goToolEnv); nothing else of the caller's
// environment leaks in. `go test ./cmd/sessionfix -update` rewrites the goldens and any `cmp` whose expected file
// is in the script.
func TestScripts(t *testing.T) {
	fixtures, err := filepath.Abs("../../fixtures")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := filepath.Abs("testdata/golden")
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Dir(fixtures)
	goEnv := goToolEnv(t)
	files, err := scriptFiles()
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Files:               files,
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Condition:           scriptCondition,
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, "home")
			e.Setenv("HOME", home)
			e.Setenv("XDG_STATE_HOME", filepath.Join(e.WorkDir, "state"))
			e.Setenv("TZ", "UTC")
			e.Setenv("FIXTURES", fixtures)
			e.Setenv("REPO", repo)
			for k, v := range goEnv {
				e.Setenv(k, v)
			}
			e.Values[locksKey{}] = map[string]*sqlitetest.WriteLock{} // this script's sqlitelock
			e.Values[usersKey{}] = map[string]string{}                // this script's mkuser users

			return os.MkdirAll(home, 0o755)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":        cmdExits,
			"golden":       func(ts *testscript.TestScript, neg bool, args []string) { cmdGolden(ts, neg, args, golden) },
			"sqlitedb":     cmdSQLiteDB,
			"append":       cmdAppend,
			"replace":      cmdReplace,
			"cpdir":        cmdCpdir,
			"cmptree":      cmdCmptree,
			"sqldump":      cmdSQLDump,
			"helpexamples": cmdHelpExamples,
			"lines":        cmdLines,
			"mkuser":       cmdMkuser,
			"chownto":      cmdChownto,
			"owned":        cmdOwned,
			"userbin":      cmdUserbin,
			"sqlquery":     cmdSQLQuery,
			"sqlitelock": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: sqlitelock DB")
				}
				l, err := sqlitetest.HoldWriteLock(context.Background(), ts.MkAbs(args[0]), time.Second)
				ts.Check(err)
				ts.Value(locksKey{}).(map[string]*sqlitetest.WriteLock)[ts.MkAbs(args[0])] = l
				ts.Defer(func() { _ = l.Release() })
			},
			"sqliteunlock": func(ts *testscript.TestScript, neg bool, args []string) {
				locks := ts.Value(locksKey{}).(map[string]*sqlitetest.WriteLock)
				if neg || len(args) != 1 || locks[ts.MkAbs(args[0])] == nil {
					ts.Fatalf("usage: sqliteunlock DB (after sqlitelock DB)")
				}
				ts.Check(locks[ts.MkAbs(args[0])].Release())
				delete(locks, ts.MkAbs(args[0]))
			},
		},
	})
}

// goToolEnv is the go command's environment a script needs to build the repository (`exec make
// -C $REPO install`) as the caller would, without a cold cache or the network: GOCACHE,
// GOMODCACHE and GOPATH of the caller's go, GOPROXY=off (every module is in the cache already,
// since this test binary was built), GOTOOLCHAIN=local and GOFLAGS=-mod=readonly.
func goToolEnv(t *testing.T) map[string]string {
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	v := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(v) != 3 {
		t.Fatalf("go env GOCACHE GOMODCACHE GOPATH: %q", out)
	}
	return map[string]string{"GOCACHE": v[0], "GOMODCACHE": v[1], "GOPATH": v[2],
		"GOPROXY": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=readonly"}
}

// scriptFiles are the scripts TestScripts runs: cmd's own, testdata/script/*.txtar, then every
// agent room's, agent/<agent>/testdata/script/*.txtar (a room shows its agent end to end from
// its own folder; names are unique over all of them).
func scriptFiles() ([]string, error) {
	var out []string
	for _, g := range []string{"testdata/script/*.txtar", "../../agent/*/testdata/script/*.txtar"} {
		m, err := filepath.Glob(g)
		if err != nil {
			return nil, err
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		return nil, errors.New("no script found")
	}
	return out, nil
}

// locksKey keys a script's held SQLite write locks (testscript Env.Values).
type locksKey struct{}

// cmdLines: lines FILE OP N fails unless FILE (or the last command's stdout or stderr) has a
// number of lines that is OP N (<=, >= or ==).
func cmdLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: lines FILE <=|>=|== N")
	}
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	got := strings.Count(ts.ReadFile(args[0]), "\n")
	ok := false
	switch args[1] {
	case "<=":
		ok = got <= n
	case ">=":
		ok = got >= n
	case "==":
		ok = got == n
	default:
		ts.Fatalf("lines: unknown comparison %q", args[1])
	}
	if !ok {
		ts.Fatalf("%s has %d lines, want %s %d", args[0], got, args[1], n)
	}
}

// cmdExits: exits N CMD ARGS… runs CMD and fails unless it exits with status N.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N CMD [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// Normalizations that make an output the same on every machine and run. Each replaces what
// varies (where the script ran, when, how long it took) and nothing an assertion needs.
var (
	reRunID   = regexp.MustCompile(`\b\d{8}T\d{6}Z-[0-9a-f]{4}\b`)
	reTime    = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
	reElapsed = regexp.MustCompile(`(\bin |"elapsed": ?")(\d+h)?(\d+m)?\d+(\.\d+)?(ns|µs|us|ms|s)\b`)
	reSHA256  = regexp.MustCompile(`\b[0-9a-f]{64}\b`)
	reCRC     = regexp.MustCompile(`crc32c:[0-9a-f]{8}`)
	reCells   = regexp.MustCompile(` {2,}`)
	// rePlaceholder finds what normalize put in place of a path, run id, time, duration or hash.
	rePlaceholder = regexp.MustCompile(`\$WORK|\bRUNID\b|\bTIME\b|\bDUR\b|\bSHA256\b`)
)

// normalize makes an output comparable: $WORK for the script's directory, RUNID, TIME, DUR,
// SHA256 and CRC for what differs from run to run; text (not JSON) tables are aligned again
// (realign), since their columns are as wide as the paths in them and $WORK's length varies.
func normalize(ts *testscript.TestScript, s string, json bool) string {
	work := ts.Getenv("WORK")
	if real, err := filepath.EvalSymlinks(work); err == nil && real != work {
		s = strings.ReplaceAll(s, real, "$WORK")
	}
	s = strings.ReplaceAll(s, work, "$WORK")
	s = reRunID.ReplaceAllString(s, "RUNID")
	s = reTime.ReplaceAllString(s, "TIME")
	s = reElapsed.ReplaceAllString(s, "${1}DUR")
	s = reSHA256.ReplaceAllString(s, "SHA256")
	s = reCRC.ReplaceAllString(s, "crc32c:CRC")
	if !json {
		s = realign(s)
	}
	return s
}

// realign lays out again each table of a text output that holds a normalized value: a run of lines
// with the same indentation, each of two or more cells separated by two or more spaces, gets its
// columns as wide as their widest cell plus two spaces (as the command's tabwriter does), from
// the cells alone. Tables without a path are left as the command wrote them.
func realign(s string) string {
	lines := strings.Split(s, "\n")
	cells := func(l string) (string, []string) {
		body := strings.TrimLeft(l, " ")
		return l[:len(l)-len(body)], reCells.Split(strings.TrimRight(body, " "), -1)
	}
	for i := 0; i < len(lines); {
		ind, c := cells(lines[i])
		if len(c) < 2 {
			i++
			continue
		}
		j := i + 1
		for ; j < len(lines); j++ {
			ind2, c2 := cells(lines[j])
			if ind2 != ind || len(c2) < 2 {
				break
			}
		}
		if !slices.ContainsFunc(lines[i:j], func(l string) bool { return rePlaceholder.MatchString(l) }) {
			i = j // nothing normalized in it: its columns are as the command laid them out
			continue
		}
		var rows [][]string
		var width []int
		for _, l := range lines[i:j] {
			_, c := cells(l)
			rows = append(rows, c)
			for k, cell := range c {
				if k >= len(width) {
					width = append(width, 0)
				}
				width[k] = max(width[k], utf8.RuneCountInString(cell))
			}
		}
		for r, c := range rows {
			var b strings.Builder
			b.WriteString(ind)
			for k, cell := range c {
				b.WriteString(cell)
				if k < len(c)-1 {
					b.WriteString(strings.Repeat(" ", width[k]-utf8.RuneCountInString(cell)+2))
				}
			}
			lines[i+r] = b.String()
		}
		i = j
	}
	return strings.Join(lines, "\n")
}

// cmdGolden: golden FILE NAME compares FILE (or the last command's stdout/stderr), normalized,
// with testdata/golden/NAME; with -update it writes NAME instead. NAME ending in .json is
// compared as JSON text (spaces kept).
func cmdGolden(ts *testscript.TestScript, neg bool, args []string, dir string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: golden FILE NAME")
	}
	got := normalize(ts, ts.ReadFile(args[0]), strings.HasSuffix(args[1], ".json"))
	path := filepath.Join(dir, args[1])
	if *update {
		ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
		ts.Check(os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		ts.Fatalf("golden file %s does not exist: run go test ./cmd/sessionfix -run TestScripts -update", path)
	}
	ts.Check(err)
	if got != string(want) {
		ts.Fatalf("%s differs from golden %s (go test ./cmd/sessionfix -update rewrites it):\n%s", args[0], args[1], lineDiff(string(want), got))
	}
}

// lineDiff lists the lines where want and got differ (first 20).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	n := 0
	for i := 0; i < max(len(w), len(g)) && n < 20; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  - %s\n  + %s\n", i+1, wl, gl)
			n++
		}
	}
	return b.String()
}

// cmdSQLiteDB: sqlitedb [-journal] DB SQL… builds a WAL database from SQL text files, or with
// -journal a rollback-journal one (what `sqlite3 DB < SQL` makes).
func cmdSQLiteDB(ts *testscript.TestScript, neg bool, args []string) {
	wal := true
	if len(args) > 0 && args[0] == "-journal" {
		wal, args = false, args[1:]
	}
	if neg || len(args) < 2 {
		ts.Fatalf("usage: sqlitedb [-journal] DB SQL...")
	}
	var rs []io.Reader
	for _, f := range args[1:] {
		rs = append(rs, strings.NewReader(ts.ReadFile(f)))
	}
	ts.Check(sqlitetest.BuildFromSQL(context.Background(), ts.MkAbs(args[0]), wal, rs...))
}

// cmdAppend: append FILE TEXT adds TEXT and a newline at the end of FILE.
func cmdAppend(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: append FILE TEXT")
	}
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_WRONLY|os.O_APPEND, 0)
	ts.Check(err)
	_, err = f.Write(append([]byte(args[1]), '\n'))
	ts.Check(errors.Join(err, f.Close()))
}

// cmdReplace: replace FILE OLD NEW replaces the first occurrence of OLD in FILE by NEW; OLD and
// NEW are Go double-quoted string literals (so a script can write any byte). FILE must hold OLD.
func cmdReplace(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: replace FILE OLD NEW")
	}
	old, err := strconv.Unquote(args[1])
	ts.Check(err)
	repl, err := strconv.Unquote(args[2])
	ts.Check(err)
	path := ts.MkAbs(args[0])
	b, err := os.ReadFile(path)
	ts.Check(err)
	if !strings.Contains(string(b), old) {
		ts.Fatalf("replace: %s does not hold %s", args[0], args[1])
	}
	ts.Check(os.WriteFile(path, []byte(strings.Replace(string(b), old, repl, 1)), 0o644))
}

// cmdCpdir: cpdir SRC DST copies a directory tree (regular files and directories), keeping
// modes and modification times.
func cmdCpdir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cpdir SRC DST")
	}
	src, dst := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	ts.Check(filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: not a regular file", p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, b, info.Mode().Perm()); err != nil {
			return err
		}
		return os.Chtimes(to, info.ModTime(), info.ModTime())
	}))
}

// cmdCmptree: cmptree A B fails unless both trees hold the same regular files with the same
// bytes, modes and modification times (negated: unless they differ).
func cmdCmptree(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: cmptree A B")
	}
	list := func(root string) map[string]string {
		out := map[string]string{}
		ts.Check(filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[rel] = fmt.Sprintf("%v %d %x", info.Mode(), info.ModTime().UnixNano(), sha256.Sum256(b))
			return nil
		}))
		return out
	}
	a, b := list(ts.MkAbs(args[0])), list(ts.MkAbs(args[1]))
	var diffs []string
	for k, v := range a {
		if b[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s: %s vs %s", k, v, b[k]))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, k+": only in "+args[1])
		}
	}
	sort.Strings(diffs)
	switch {
	case neg && len(diffs) == 0:
		ts.Fatalf("%s and %s are the same", args[0], args[1])
	case !neg && len(diffs) > 0:
		ts.Fatalf("%s and %s differ:\n%s", args[0], args[1], strings.Join(diffs, "\n"))
	}
}

// cmdSQLDump: sqldump DB OUT writes DB's SQL dump to OUT.
func cmdSQLQuery(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sqlquery DB SQL")
	}
	_, rows, err := sqlitetest.Query(context.Background(), ts.MkAbs(args[0]), args[1])
	ts.Check(err)
	for _, r := range rows {
		fmt.Fprintln(ts.Stdout(), strings.Join(r, "|"))
	}
}

func cmdSQLDump(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sqldump DB OUT")
	}
	var b strings.Builder
	ts.Check(sqlitetest.Dump(context.Background(), ts.MkAbs(args[0]), &b))
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(b.String()), 0o644))
}
