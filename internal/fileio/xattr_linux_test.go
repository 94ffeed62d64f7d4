package fileio

import (
	"testing"

	"golang.org/x/sys/unix"
)

func setXattr(path, name, value string) error { return unix.Setxattr(path, name, []byte(value), 0) }

func getXattr(t testing.TB, path, name string) string {
	t.Helper()
	buf := make([]byte, 256)
	n, err := unix.Getxattr(path, name, buf)
	if err != nil {
		t.Fatalf("getxattr %s: %v", name, err)
	}
	return string(buf[:n])
}
