package fileio

import "sync"

// dirSyncs groups the directory fsyncs of concurrent rewrites that share a directory (every
// backup of a run is made in its run's backups/): one fsync that starts after an entry was
// made covers every entry made before it, as the run journal's group commit does for lines.
var dirSyncs struct {
	mu   sync.Mutex
	dirs map[string]*dirSync
}

// dirSync is the group-commit state of one directory. tickets counts the requests: a request
// takes its ticket after its entry was made (link, create). synced is the highest ticket an
// fsync has covered: one whose ticket had been taken before that fsync started.
type dirSync struct {
	mu      sync.Mutex // guards tickets
	smu     sync.Mutex // held for the fsync; guards synced
	tickets uint64
	synced  uint64
	// failed is the highest ticket a failed fsync covered, failErr its error (guarded by smu).
	failed  uint64
	failErr error
	users   int // requests in progress (the entry is dropped at zero)
}

// syncDirGrouped returns once every entry made in dir before the call is durable: at once when
// an fsync of dir that started after the call's ticket was taken has completed (another
// rewrite's), else after one more SyncDir, which covers every ticket taken so far. A failed
// fsync makes nothing durable, and its error goes to every request whose ticket it covered:
// Linux reports a writeback error to one fsync only (errseq), so their own retry could
// succeed without their entry on disk. A request after it has its own fsync.
func syncDirGrouped(dir string) error {
	dirSyncs.mu.Lock()
	if dirSyncs.dirs == nil {
		dirSyncs.dirs = map[string]*dirSync{}
	}
	d := dirSyncs.dirs[dir]
	if d == nil {
		d = &dirSync{}
		dirSyncs.dirs[dir] = d
	}
	d.users++
	dirSyncs.mu.Unlock()
	defer func() {
		dirSyncs.mu.Lock()
		if d.users--; d.users == 0 {
			delete(dirSyncs.dirs, dir)
		}
		dirSyncs.mu.Unlock()
	}()

	d.mu.Lock()
	d.tickets++
	t := d.tickets
	d.mu.Unlock()

	d.smu.Lock()
	defer d.smu.Unlock()
	if d.failed >= t {
		// Checked first: a later fsync's success does not prove an entry an earlier one
		// failed to write is on disk.
		return d.failErr
	}
	if d.synced >= t {
		return nil
	}
	d.mu.Lock()
	upto := d.tickets // every ticket taken so far: its entry exists before this fsync starts
	d.mu.Unlock()
	if err := SyncDir(dir); err != nil {
		d.failed, d.failErr = upto, err
		return err
	}
	d.synced = upto
	return nil
}
