//go:build unix

package runlog

import (
	"fmt"
	"os"
	"syscall"
)

// checkOwner returns why the run file or directory fi (at p) could have been written by
// someone other than the user running sessionfix (effective uid), "" when it could not: it
// must be owned by that user and not writable by group or others. Source: issue 9, finding 8 —
// the manifest's checksum is a plain SHA-256 anyone can recompute, and its roots are part of
// the manifest, so the path checks alone bound nothing for whoever may write the run.
func checkOwner(p string, fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return fmt.Sprintf("%s is owned by uid %d, not by the user running sessionfix (uid %d)", p, st.Uid, uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("%s is writable by group or others (mode %s; chmod go-w it if that is intended to be safe)", p, fi.Mode().Perm())
	}
	return ""
}
