//go:build unix

package store

import (
	"os"
	"syscall"
)

// chownLike gives f the owner of fi, best effort (it only matters when run as root over
// another user's files, and fails harmlessly otherwise).
func chownLike(f *os.File, fi os.FileInfo) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}
