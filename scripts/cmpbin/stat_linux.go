package main

import (
	"io/fs"
	"syscall"
)

// identity is what tells a file that no one wrote since it was stat-ed: inode, size, mtime
// and ctime (which every write, rename and chmod sets, and no one can set back).
type identity struct {
	ino                uint64
	size, mtime, ctime int64
}

func identityOf(fi fs.FileInfo) (identity, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return identity{}, false
	}
	return identity{ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}
