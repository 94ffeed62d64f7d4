//go:build !unix

package fileio

import (
	"os"

	"github.com/sessionfix/sessionfix/store"
)

func chownLike(*os.File, os.FileInfo) {}

// ownerOf: this platform has no Unix owner.
func ownerOf(os.FileInfo) *store.FileOwner { return nil }

// noFollowNonBlock: this platform has neither flag.
const noFollowNonBlock = 0

// nlink is unknown here: a backup is then a hard link only where the platform allows it.
func nlink(os.FileInfo) uint64 { return 1 }

// openNoFollow opens path read-only (this platform has no O_NOFOLLOW: runlog.CheckRun's
// symlink check is all there is).
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

// devIno is unknown here: UnmoveFile then checks size and mtime only.
func devIno(os.FileInfo) (uint64, uint64) { return 0, 0 }

// sameFile is os.SameFile (no other kind of stat is made here).
func sameFile(a, b os.FileInfo) bool { return a != nil && b != nil && os.SameFile(a, b) }

// oDirectory: no such flag here.
const oDirectory = 0
