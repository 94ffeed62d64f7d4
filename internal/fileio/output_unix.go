//go:build unix

package fileio

import "syscall"

// writeFD writes all of data to an open descriptor of this process without wrapping it in an
// *os.File (which would close it when collected).
func writeFD(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}
