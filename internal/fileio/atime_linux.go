package fileio

import (
	"os"
	"syscall"
	"time"
)

// atime returns the access time of fi (kept when a file is replaced), falling back to now.
func atime(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(st.Atim.Sec), int64(st.Atim.Nsec))
	}
	return time.Now()
}

// ctime returns the inode change time of fi: any write or metadata change moves it, and no
// process can set it back.
func ctime(fi os.FileInfo) (time.Time, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)), true
	}
	return time.Time{}, false
}
