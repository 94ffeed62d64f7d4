//go:build !unix

package fileio

import "errors"

// writeFD: descriptor links (/dev/fd/N) exist only on unix.
func writeFD(int, []byte) error {
	return errors.New("writing to a descriptor link is supported on unix only")
}
