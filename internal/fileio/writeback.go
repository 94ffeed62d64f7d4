package fileio

import "os"

// StartWriteback asks the kernel to start writing the n bytes of f at off to disk without
// waiting (Linux: sync_file_range SYNC_FILE_RANGE_WRITE; elsewhere nothing), for a writer of a
// large file that fsyncs it at the end: the disk works while the rest is written and the fsync
// waits for less. Durability still comes from the fsync alone.
func StartWriteback(f *os.File, off, n int64) { startWriteback(f, off, n) }
