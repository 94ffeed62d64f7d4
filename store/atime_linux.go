package store

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
