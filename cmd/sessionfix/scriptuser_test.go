package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// Scripts that need a second, unprivileged user (issue 23 items 5 and 8: another user's files,
// a user's run over root's file). Root only: a script starts with `[!root] skip '…'`.
//
//	mkuser NAME         make a throwaway system user (useradd; userdel at the end of the script),
//	                    and set $NAME (its login), $NAME_uid and $NAME_gid; $WORK is made
//	                    reachable by it, and $SESSIONFIX is a copy of the command it may run
//	userbin             make $WORK reachable by any user and set $SESSIONFIX (as mkuser does)
//	chownto NAME PATH…  give PATH and everything under it to NAME (a mkuser user, or root)
//	asuser UID GID PROG ARGS…  (a program: `exits N asuser …`) run PROG as UID:GID, no
//	                    supplementary groups
//	owned UID:GID FILE…  each FILE (not followed) belongs to UID:GID (! owned: one does not)
//	$SESSIONFIX_TEST_PASSWD, when a script sets it, is the user database --all-users reads

// asUserMain is the asuser program: it drops to the uid and gid of its first two arguments and
// executes the rest.
func asUserMain() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: asuser UID GID PROG [ARGS…]")
		os.Exit(2)
	}
	uid, err1 := strconv.Atoi(os.Args[1])
	gid, err2 := strconv.Atoi(os.Args[2])
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "asuser: UID and GID are numbers")
		os.Exit(2)
	}
	prog, err := exec.LookPath(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, "asuser:", err)
		os.Exit(2)
	}
	for _, err := range []error{syscall.Setgroups(nil), syscall.Setgid(gid), syscall.Setuid(uid)} {
		if err != nil {
			fmt.Fprintln(os.Stderr, "asuser:", err)
			os.Exit(2)
		}
	}
	err = syscall.Exec(prog, os.Args[3:], os.Environ())
	fmt.Fprintln(os.Stderr, "asuser:", err)
	os.Exit(2)
}

// scriptCondition adds [root] (this process runs as root) to testscript's conditions.
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "root":
		return os.Geteuid() == 0, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// usersKey keys a script's mkuser users (name → login).
type usersKey struct{}

func cmdMkuser(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkuser NAME")
	}
	if os.Geteuid() != 0 {
		ts.Fatalf("mkuser needs root (start the script with [!root] skip)")
	}
	name := args[0]
	login := fmt.Sprintf("sf%s%d", name, (os.Getpid()*1000+int(time.Now().UnixNano()%1000))%10000000)
	if len(login) > 31 {
		login = login[:31]
	}
	if out, err := exec.Command(sbin("useradd"), "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", login).CombinedOutput(); err != nil {
		ts.Fatalf("useradd %s: %v %s", login, err, bytes.TrimSpace(out))
	}
	ts.Defer(func() { _ = exec.Command(sbin("userdel"), login).Run() })
	u, err := user.Lookup(login)
	ts.Check(err)
	ts.Setenv(name, login)
	ts.Setenv(name+"_uid", u.Uid)
	ts.Setenv(name+"_gid", u.Gid)
	users, _ := ts.Value(usersKey{}).(map[string]string)
	users[name] = login
	cmdUserbin(ts, false, nil)
}

// cmdUserbin makes $WORK reachable by other users and sets $SESSIONFIX to a copy of the command
// they may run (mkuser does it too).
func cmdUserbin(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: userbin")
	}
	// The user reaches $WORK (testscript's directories are root's, 0700) and runs a copy of
	// the command.
	work := ts.Getenv("WORK")
	for d := work; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		ts.Check(err)
		if fi.Mode().Perm()&0o001 == 0 {
			ts.Check(os.Chmod(d, fi.Mode().Perm()|0o011))
		}
	}
	bin := filepath.Join(work, ".bin", "sessionfix")
	if _, err := os.Stat(bin); err != nil {
		ts.Check(os.MkdirAll(filepath.Dir(bin), 0o755))
		exe, err := os.Executable()
		ts.Check(err)
		src, err := os.Open(exe)
		ts.Check(err)
		defer src.Close()
		dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
		ts.Check(err)
		_, err = io.Copy(dst, src)
		ts.Check(err)
		ts.Check(dst.Close())
	}
	ts.Setenv("SESSIONFIX", bin)
}

func cmdChownto(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: chownto NAME PATH…")
	}
	uid, gid := 0, 0
	if args[0] != "root" {
		users, _ := ts.Value(usersKey{}).(map[string]string)
		login, ok := users[args[0]]
		if !ok {
			ts.Fatalf("chownto: %s is not a mkuser user", args[0])
		}
		u, err := user.Lookup(login)
		ts.Check(err)
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
	}
	for _, p := range args[1:] {
		ts.Check(filepath.Walk(ts.MkAbs(p), func(q string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(q, uid, gid)
		}))
	}
}

func cmdOwned(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: owned UID:GID FILE…")
	}
	all := true
	for _, p := range args[1:] {
		fi, err := os.Lstat(ts.MkAbs(p))
		ts.Check(err)
		st := fi.Sys().(*syscall.Stat_t)
		got := fmt.Sprintf("%d:%d", st.Uid, st.Gid)
		if got != args[0] {
			all = false
			if !neg {
				ts.Fatalf("%s belongs to %s, want %s", p, got, args[0])
			}
		}
	}
	if neg && all {
		ts.Fatalf("every file belongs to %s", args[0])
	}
}

// sbin is the path of a system administration tool (useradd, userdel): from PATH, else
// /usr/sbin or /sbin, which a root shell's PATH may lack (env -i, some cron jobs); the bare
// name when none exists (the exec error then names it).
func sbin(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p
		}
	}
	return name
}

// isExecutable says whether p is a regular file with an execute bit.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
