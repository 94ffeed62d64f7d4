package fileio

import "os"

// SameFile reports whether two paths name the same file (both exist and os.SameFile says so;
// symbolic links are followed).
func SameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
