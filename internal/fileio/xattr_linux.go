package fileio

import (
	"bytes"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// copyXattrs gives dst the extended attributes of the file at src (POSIX ACLs are extended
// attributes too), so a replaced file keeps them. It returns one warning per attribute that
// could not be read or set (a file system without xattrs, a "trusted." one without privilege).
func copyXattrs(src string, dst *os.File) []string {
	size, err := unix.Llistxattr(src, nil)
	if err != nil || size == 0 {
		if err != nil && !errors.Is(err, unix.ENOTSUP) && !errors.Is(err, unix.ENOENT) {
			return []string{"extended attributes not listed: " + err.Error()}
		}
		return nil
	}
	buf := make([]byte, size)
	size, err = unix.Llistxattr(src, buf)
	if err != nil {
		return []string{"extended attributes not listed: " + err.Error()}
	}
	var warnings []string
	for _, name := range bytes.Split(buf[:size], []byte{0}) {
		if len(name) == 0 {
			continue
		}
		n := string(name)
		vsize, err := unix.Lgetxattr(src, n, nil)
		if err != nil {
			warnings = append(warnings, "extended attribute "+n+" not copied: "+err.Error())
			continue
		}
		val := make([]byte, vsize)
		if vsize, err = unix.Lgetxattr(src, n, val); err == nil {
			err = unix.Fsetxattr(int(dst.Fd()), n, val[:vsize], 0)
		}
		if err != nil {
			warnings = append(warnings, "extended attribute "+n+" not copied: "+err.Error())
		}
	}
	return warnings
}
