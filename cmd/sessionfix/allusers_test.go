package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/pipeline"
)

// owners is every file's uid:gid under root.
func owners(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		require.NoError(t, err)
		st := fi.Sys().(*syscall.Stat_t)
		out[p] = fmt.Sprintf("%d:%d", st.Uid, st.Gid)
		return nil
	}))
	return out
}

// allUsersPasswd writes a user database (passwd(5)) with two users whose homes hold the genuine
// Qwen Code home (uids 4242 and 4243, their files theirs; one session 0640 with another
// group), a user whose home holds no agent, one sharing another's home, /nonexistent, "/" and a
// line that is no entry; PasswdFile points to it for the test. It returns the two homes.
func allUsersPasswd(t *testing.T) (a, b string) {
	base := t.TempDir()
	require.NoError(t, os.Chmod(base, 0o755))
	a, b = filepath.Join(base, "ann"), filepath.Join(base, "bob")
	empty := filepath.Join(base, "cy")
	for i, h := range []string{a, b} {
		copyTree(t, "../../fixtures/qwen-real/dot-qwen", filepath.Join(h, ".qwen"))
		chownTree(t, h, 4242+i)
	}
	require.NoError(t, os.MkdirAll(empty, 0o755))
	chat := filepath.Join(b, ".qwen/projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl")
	require.NoError(t, os.Chown(chat, 4243, 100))
	require.NoError(t, os.Chmod(chat, 0o640))
	passwd := filepath.Join(base, "passwd")
	require.NoError(t, os.WriteFile(passwd, []byte(fmt.Sprintf(`# test users
root:x:0:0:root:/:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
ann:x:4242:4242:Ann:%s:/bin/sh
bob:x:4243:4243:Bob:%s:/bin/sh
cy:x:4244:4244:Cy:%s:/bin/sh
ann2:x:4245:4245:Ann again:%s:/bin/sh
+nis
`, a, b, empty, a)), 0o644))
	saved := pipeline.PasswdFile
	pipeline.PasswdFile = passwd
	t.Cleanup(func() { pipeline.PasswdFile = saved })
	return a, b
}

// TestFixAllUsers (issue 23 item 5): as root, fix --all-users --apply rewrites the Qwen Code
// stores of every home of the user database that holds one, each home on its own line, every
// file keeping its owner, group and mode; the entries skipped are said; one run, so undo --last
// restores both homes. Off root --all-users is refused (exit 2), and with a PATH too.
func TestFixAllUsers(t *testing.T) {
	needRoot(t)
	a, b := allUsersPasswd(t)
	env := testEnv(t)
	state := filepath.Join(t.TempDir(), "S")
	origA, origB := snapshotTree(t, a), snapshotTree(t, b)
	ownA, ownB := owners(t, a), owners(t, b)

	r := runCLI(t, env, "", "scan", "--all-users")
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.out, "2 homes (--all-users):\n  "+a+" (ann, uid 4242): 4 stores, 35 names to rewrite, 7 kept; "+a+"/.qwen\n  "+b+" (bob, uid 4243): 4 stores, 35 names to rewrite, 7 kept; "+b+"/.qwen\n")
	assert.Contains(t, r.err, "note: "+pipeline.PasswdFile+": root (/): not a home directory, not covered by --all-users\n")
	assert.Contains(t, r.err, "nobody (/nonexistent): does not exist, not covered by --all-users\n")
	assert.Contains(t, r.err, "cy ("+filepath.Dir(a)+"/cy): no agent store, not covered by --all-users\n")
	assert.Contains(t, r.err, "ann2 ("+a+"): the home of ann too: covered once, as ann's, not covered by --all-users\n")
	assert.Contains(t, r.err, "line 8 is not a user entry")

	r = runCLI(t, env, "", "fix", "--all-users", "--apply", "--yes", "--state-dir", state)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.out, "  "+a+" (ann, uid 4242): 4 stores, 35 names rewritten, 7 kept; "+a+"/.qwen\n")
	assert.Contains(t, r.out, "  "+b+" (bob, uid 4243): 4 stores, 35 names rewritten, 7 kept; "+b+"/.qwen\n")
	assert.Contains(t, r.out, "rewrote 70 names in 6 files")
	assert.Equal(t, ownA, owners(t, a), "ann's files are still ann's")
	assert.Equal(t, ownB, owners(t, b), "bob's files are still bob's, the 0640 session's group too")
	nowA, nowB := snapshotTree(t, a), snapshotTree(t, b)
	for p, st := range origB {
		assert.Equal(t, st.mode, nowB[p].mode, p)
	}
	assert.NotEqual(t, origA, nowA)
	assert.NotEqual(t, origB, nowB)

	r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.out, "restored 6 files of run ")
	assert.Equal(t, origA, snapshotTree(t, a), "undo --last restores ann's home")
	assert.Equal(t, origB, snapshotTree(t, b), "and bob's")
	assert.Equal(t, ownA, owners(t, a))
	assert.Equal(t, ownB, owners(t, b))

	// audit: each home its own section.
	r = runCLI(t, env, "", "audit", "--all-users", "--format", "json")
	assert.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.err, "home "+a+" (ann, uid 4242): "+a+"/.qwen\n", r.out)
	assert.Contains(t, r.err, "home "+b+" (bob, uid 4243): "+b+"/.qwen\n")
	assert.Contains(t, r.out, `"home": "`+a+`"`)
	assert.Contains(t, r.out, `"home": "`+b+`"`)

	// Issue 30's rule per home: cy's ~/.qwen is cy's link to root's Qwen Code home; root does not
	// follow it (exit 3, named), and root's files are untouched.
	rootQwen := filepath.Join(t.TempDir(), "root-qwen")
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", rootQwen)
	origRoot := snapshotTree(t, rootQwen)
	cyQwen := filepath.Join(filepath.Dir(a), "cy", ".qwen")
	require.NoError(t, os.Symlink(rootQwen, cyQwen))
	require.NoError(t, os.Lchown(cyQwen, 4244, 4244))
	r = runCLI(t, env, "", "fix", "--all-users", "--apply", "--yes", "--state-dir", state)
	assert.Equal(t, exitcode.Partial, r.code, r.err)
	assert.Contains(t, r.err, "symbolic link "+cyQwen+" -> "+rootQwen+" not followed: the link belongs to uid 4244 but what it points to belongs to uid 0 (root)")
	assert.Equal(t, origRoot, snapshotTree(t, rootQwen), "root's files are untouched")
	r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
	require.Equal(t, exitcode.OK, r.code, r.err)
	require.NoError(t, os.Remove(cyQwen))

	// With a PATH, and off root: refused, nothing done.
	r = runCLI(t, env, "", "fix", "--all-users", a)
	assert.Equal(t, exitcode.Usage, r.code, r.err)
	assert.Contains(t, r.err, "--all-users covers the agents' stores in every user's home: give no PATH with it")
	saved := owner.Euid
	owner.Euid = func() int { return 4242 }
	defer func() { owner.Euid = saved }()
	for _, cmd := range []string{"scan", "fix", "check", "audit"} {
		r = runCLI(t, env, "", cmd, "--all-users", "--provider", "all")
		if cmd != "check" {
			r = runCLI(t, env, "", cmd, "--all-users")
		}
		assert.Equal(t, exitcode.Usage, r.code, cmd+": "+r.err)
		assert.Contains(t, r.err, "--all-users is for root (it reads, and fix --apply rewrites, every user's home): you are uid 4242", cmd)
	}
}
