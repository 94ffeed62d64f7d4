// Package owner holds the rules sessionfix follows about who owns a file when it runs over
// files other users control — typically as root, over users' homes (issue 30): which symbolic
// links it follows (LinkRefusal, Resolve), and which MCP configs' commands it may start
// (Untrusted). It is a leaf (internal/layering TestLeavesImportNothingOfTheModule), so the file
// mechanisms (internal/fileio), discovery (scan) and the config reader (mcpconfig) share it.
package owner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Euid is the effective user id the rules are applied for (os.Geteuid; a variable for tests).
var Euid = os.Geteuid

// AsRoot reports whether this process runs as root (effective uid 0): the link rules then
// apply.
func AsRoot() bool { return Euid() == 0 }

// UID returns the owner of fi (ok false where the platform does not say).
func UID(fi fs.FileInfo) (uint32, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid, true
	}
	return 0, false
}

// InGroup reports whether the user uid is a member of the group gid in the user database (its
// primary group or a supplementary one); false when the database does not say.
func InGroup(uid, gid uint32) bool {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return false
	}
	ids, err := u.GroupIds()
	if err != nil {
		ids = []string{u.Gid}
	}
	want := strconv.FormatUint(uint64(gid), 10)
	for _, id := range ids {
		if id == want {
			return true
		}
	}
	return u.Gid == want
}

// Describe is "uid N (name)", or "uid N" when the user database has no name for it.
func Describe(uid uint32) string {
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil && u.Username != "" {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}

// LinkRefusal says why root must not follow the symbolic link whose lstat is link to the file or
// directory whose stat is target; "" when it may: the link belongs to root, or its owner owns the
// target. A link a user made leads root only to what that user owns: following it elsewhere
// would let the user make root read, report or rewrite another user's (root's) files — an
// agent's home linked to a root-owned directory, an agent home's sessions directory linked to
// another owner's (issue 30 finding 3). A target inside the same home is its owner's in a home whose files are
// the user's; a file another user owns inside it (root's, left by sudo) is refused like any
// other. Off root (AsRoot false) nothing is refused: the kernel already stops a user at what
// they may read.
func LinkRefusal(link, target fs.FileInfo) string {
	if !AsRoot() {
		return ""
	}
	lu, ok1 := UID(link)
	tu, ok2 := UID(target)
	if !ok1 || !ok2 || lu == 0 || lu == tu {
		return ""
	}
	return fmt.Sprintf("the link belongs to %s but what it points to belongs to %s: as root, a link is followed only to what its owner owns", Describe(lu), Describe(tu))
}

// LinkError is a symbolic link Resolve refused to follow (LinkRefusal).
type LinkError struct {
	Link, Target string
	Reason       string
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("symbolic link %s -> %s not followed: %s", e.Link, e.Target, e.Reason)
}

// ErrLinkRefused is what errors.Is finds in a *LinkError.
var ErrLinkRefused = errors.New("symbolic link not followed")

// Is makes errors.Is(err, ErrLinkRefused) true.
func (e *LinkError) Is(target error) bool { return target == ErrLinkRefused }

// maxLinks bounds the links Resolve follows for one path (Linux's own limit, ELOOP beyond).
const maxLinks = 40

// Resolve returns the absolute path path names with every symbolic link in it resolved
// (filepath.EvalSymlinks), checking each link as root with LinkRefusal: a link that must not be
// followed is a *LinkError naming it and its target. A part that does not exist ends the
// resolution: the rest is joined as it is (the caller's open or stat reports it). Off root it is
// filepath.EvalSymlinks of the absolute path, with the same not-existing rule.
func Resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	n := 0
	return resolve(abs, &n)
}

func resolve(abs string, links *int) (string, error) {
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(abs), "/"), "/")
	cur := "/"
	for i, p := range parts {
		if p == "" {
			continue
		}
		next := filepath.Join(cur, p)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if *links++; *links > maxLinks {
			return "", &fs.PathError{Op: "resolve", Path: abs, Err: syscall.ELOOP}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(cur, target)
		}
		real, err := resolve(target, links)
		if err != nil {
			return "", err
		}
		tfi, err := os.Lstat(real)
		if err != nil {
			// A dangling link: what follows does not exist.
			return filepath.Join(append([]string{real}, parts[i+1:]...)...), nil
		}
		if why := LinkRefusal(fi, tfi); why != "" {
			return "", &LinkError{Link: next, Target: real, Reason: why}
		}
		cur = real
	}
	return cur, nil
}

// Untrusted says why a config file whose stat is fi must not have its commands started (an MCP
// server's command, run by --discover) without the operator's explicit word; "" when it may:
// it belongs to the effective user or to root, and no one else may write it. A config another
// user owns or can write is that user's: starting its commands runs that user's program as
// this process — as root, for a scheduled audit over users' homes (issue 30 finding 1).
func Untrusted(fi fs.FileInfo) string {
	uid, ok := UID(fi)
	if !ok {
		return ""
	}
	me := uint32(Euid())
	switch {
	case uid != me && uid != 0:
		return fmt.Sprintf("it belongs to %s, not to you (%s)", Describe(uid), Describe(me))
	case fi.Mode().Perm()&0o002 != 0:
		return fmt.Sprintf("anyone can write it (mode %04o)", fi.Mode().Perm())
	case fi.Mode().Perm()&0o020 != 0 && !privateGroup(fi):
		return fmt.Sprintf("its group %s can write it (mode %04o)", describeGroup(fi), fi.Mode().Perm())
	}
	return ""
}

// privateGroup reports whether fi's group is its owner's own (a user-private group: the owner's
// primary group, named as the owner), whose write bit a umask of 002 sets and gives no one
// else.
func privateGroup(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	u, err := user.LookupId(strconv.FormatUint(uint64(st.Uid), 10))
	if err != nil || u.Gid != strconv.FormatUint(uint64(st.Gid), 10) {
		return false
	}
	g, err := user.LookupGroupId(u.Gid)
	return err == nil && g.Name == u.Username
}

// describeGroup is "gid N (name)".
func describeGroup(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "?"
	}
	if g, err := user.LookupGroupId(strconv.FormatUint(uint64(st.Gid), 10)); err == nil {
		return fmt.Sprintf("gid %d (%s)", st.Gid, g.Name)
	}
	return fmt.Sprintf("gid %d", st.Gid)
}
