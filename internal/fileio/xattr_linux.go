package fileio

import (
	"bytes"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// copyXattrs gives dst the extended attributes of the file open as src (POSIX ACLs are extended
// attributes too), so a replaced file keeps them. It returns one warning per attribute that
// could not be read or set (a file system without xattrs, a "trusted." one without privilege).
// Both are read and written through their descriptors: the original's name may have been
// swapped for another file's since it was opened (issue 30 finding 4).
func copyXattrs(src, dst *os.File) []string {
	sfd := int(src.Fd())
	size, err := unix.Flistxattr(sfd, nil)
	if err != nil || size == 0 {
		if err != nil && !errors.Is(err, unix.ENOTSUP) && !errors.Is(err, unix.ENOENT) {
			return []string{"extended attributes not listed: " + err.Error()}
		}
		return nil
	}
	buf := make([]byte, size)
	size, err = unix.Flistxattr(sfd, buf)
	if err != nil {
		return []string{"extended attributes not listed: " + err.Error()}
	}
	var warnings []string
	for _, name := range bytes.Split(buf[:size], []byte{0}) {
		if len(name) == 0 {
			continue
		}
		n := string(name)
		vsize, err := unix.Fgetxattr(sfd, n, nil)
		if err != nil {
			warnings = append(warnings, "extended attribute "+n+" not copied: "+err.Error())
			continue
		}
		val := make([]byte, vsize)
		if vsize, err = unix.Fgetxattr(sfd, n, val); err == nil {
			err = unix.Fsetxattr(int(dst.Fd()), n, val[:vsize], 0)
		}
		if err != nil {
			warnings = append(warnings, "extended attribute "+n+" not copied: "+err.Error())
		}
	}
	return warnings
}
