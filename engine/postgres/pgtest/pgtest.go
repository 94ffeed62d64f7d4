// Package pgtest gives tests a PostgreSQL server (for tests only):
// the one named by SESSIONFIX_TEST_PG (a postgres:// URL of a role that may CREATE DATABASE;
// its password, if any, in PGPASSWORD: .ci/run exports both), else a private throwaway cluster
// started from the machine's initdb and pg_ctl (on PATH or under /usr/lib/postgresql/*/bin):
// bound to 127.0.0.1 on a free port, its socket in its own directory, password authentication
// over TCP, fsync off, stopped and removed when the test (or TestMain) ends. As root, initdb
// refuses to run: the cluster is created and run as the user "nobody". Starting one takes
// about 5 s (initdb and start), so a package starts one per TestMain (Main) or per top-level
// test (Start), never per subtest.
//
// Without either, the tests skip with the reason, except under CI=true, where they fail: CI
// must never pass a PostgreSQL test it did not run.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib" // also the "pgx" database/sql driver
)

// Env names the variable holding the server's URL.
const Env = "SESSIONFIX_TEST_PG"

// Server is a PostgreSQL server for tests.
type Server struct {
	// URL is the admin URL without password (postgres://user@host:port/postgres).
	URL string
	// Password is the admin password ("" when none is needed).
	Password string
	// Bin is the directory of the server's programs ("" for a server from Env).
	Bin  string
	stop func()
}

// Stop stops a cluster this package started (nothing for a server from Env).
func (s *Server) Stop() {
	if s.stop != nil {
		s.stop()
		s.stop = nil
	}
}

// WithPassword returns u (a URL on the server) with the password in its userinfo.
func (s *Server) WithPassword(u string) string {
	if s.Password == "" {
		return u
	}
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.User = url.UserPassword(p.User.Username(), s.Password)
	return p.String()
}

// DB creates a new empty database and returns its URL (without password); it is dropped when
// t ends.
func (s *Server) DB(t testing.TB) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "sf_" + hex.EncodeToString(b)
	db, err := sql.Open("pgx", s.WithPassword(s.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", s.WithPassword(s.URL))
		if err == nil {
			_, _ = db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
			db.Close()
		}
	})
	u, _ := url.Parse(s.URL)
	u.Path = "/" + name
	return u.String()
}

// unavailable skips t with why, or fails it under CI=true.
func unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("PostgreSQL tests cannot run under CI=true: %s (.ci/run starts a cluster and exports %s)", why, Env)
	}
	t.Skipf("PostgreSQL tests skipped: %s (set %s to a server's URL, or put initdb on PATH)", why, Env)
}

// Start returns a server for t: the one of Env, else a cluster started for t alone (stopped
// when t ends); it skips or fails t (see the package doc) when there is none.
func Start(t testing.TB) *Server {
	t.Helper()
	s, why := start()
	if s == nil {
		unavailable(t, why)
		return nil
	}
	t.Cleanup(s.Stop)
	return s
}

var (
	shared    *Server
	sharedWhy string
	once      sync.Once
)

// Main runs m with one server shared by the package's tests (Shared), stopped after them.
func Main(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	os.Exit(code)
}

// Shared returns the package's server (started on first use; Main stops it), skipping or
// failing t when there is none.
func Shared(t testing.TB) *Server {
	t.Helper()
	once.Do(func() { shared, sharedWhy = start() })
	if shared == nil {
		unavailable(t, sharedWhy)
	}
	return shared
}

// start connects to Env's server or starts a cluster.
func start() (*Server, string) {
	if u := os.Getenv(Env); u != "" {
		s := &Server{URL: u, Password: os.Getenv("PGPASSWORD")}
		if err := ping(s.WithPassword(u)); err != nil {
			return nil, fmt.Sprintf("%s=%s: %v", Env, u, err)
		}
		return s, ""
	}
	bin := findBin()
	if bin == "" {
		return nil, "no server named and no initdb found"
	}
	s, err := startCluster(bin)
	if err != nil {
		return nil, "starting a private cluster: " + err.Error()
	}
	return s, ""
}

func ping(u string) error {
	db, err := sql.Open("pgx", u)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// findBin returns the directory holding initdb, pg_ctl and postgres.
func findBin() string {
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return filepath.Dir(p)
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(m) > 0 {
		return filepath.Dir(m[len(m)-1])
	}
	return ""
}

// freePort returns a TCP port free on 127.0.0.1 right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startCluster runs initdb and pg_ctl start (as nobody when root) in a new temp directory.
func startCluster(bin string) (*Server, error) {
	dir, err := os.MkdirTemp("", "sessionfix-pg-")
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root, and no user nobody to run initdb as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	pw := hex.EncodeToString(b)
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(pw+"\n"), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if cred != nil {
		_ = os.Chown(pwfile, int(cred.Uid), int(cred.Gid))
	}
	run := func(name string, args ...string) error {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	data := filepath.Join(dir, "data")
	if err := run("initdb", "-D", data, "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256",
		"--pwfile="+pwfile, "-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	_ = os.Remove(pwfile)
	var port int
	for try := 0; ; try++ {
		if port, err = freePort(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off", port, dir)
		err = run("pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start")
		if err == nil {
			break
		}
		if try == 2 {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	s := &Server{URL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres", port), Password: pw, Bin: bin}
	s.stop = func() {
		_ = run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	}
	if err := ping(s.WithPassword(s.URL)); err != nil {
		s.Stop()
		return nil, errors.New("started, but: " + err.Error())
	}
	return s, nil
}

// Exec runs a multi-statement SQL script on the database at u (the simple protocol: no
// parameters); lines starting with a backslash (psql meta-commands such as pg_dump's \restrict)
// are left out.
func Exec(t testing.TB, u, script string) {
	t.Helper()
	var keep []string
	for _, l := range strings.Split(script, "\n") {
		if !strings.HasPrefix(l, `\`) {
			keep = append(keep, l)
		}
	}
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Raw(func(dc any) error {
		_, err := dc.(*stdlib.Conn).Conn().PgConn().Exec(context.Background(), strings.Join(keep, "\n")).ReadAll()
		return err
	}); err != nil {
		t.Fatalf("exec script: %v", err)
	}
}

// ExecFile is Exec of the file at path.
func ExecFile(t testing.TB, u, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	Exec(t, u, string(b))
}

// Values returns table.column as text per key column's text ("<NULL>" for NULL).
func Values(t testing.TB, u, table, key, column string) map[string]string {
	t.Helper()
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(fmt.Sprintf("SELECT %s::text, coalesce(%s::text, '<NULL>') FROM %s", key, column, table))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// Query returns the first column of the first row of q on the database at u, as text.
func Query(t testing.TB, u, q string) string {
	t.Helper()
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v sql.NullString
	if err := db.QueryRow(q).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v.String
}
