package fileio

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
)

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

// DirSyncs defers the directory fsync that ends a rewrite (RewriteFile's step 9) until the
// caller asks for it (Durable, Sync), and then makes every directory renamed in since durable
// at once: one syncfs(2) of each file system where that stands for their fsyncs, else one
// fsync of each distinct directory. A run that rewrites a thousand sessions, each in its own
// directory, waits for a few file-system commits, not a thousand. Safe for concurrent use.
//
// What the deferral gives up is only how early a rename is durable: until it is made so, a
// power loss may undo the rename, and the store then holds its old bytes (the rename is
// atomic: old or new, never a mix), which undo handles (a store that holds the original is
// given its backup, byte-identical). The journal's "commit" line, fsynced before the rename,
// still records the change. A process killed meanwhile loses nothing (the renames are in the
// kernel). The caller makes a store durable before it reports it rewritten (Durable) and
// everything before anything that relies on the new names (Sync: the run's final manifest, a
// move of a rewritten store).
type DirSyncs struct {
	mu      sync.Mutex
	pending []*pendingDir            // the directories renamed in and not yet made durable, in the order first added
	byDir   map[string][]*pendingDir // pending by the directory's path (one per directory held: a path swapped between two renames leads to two)
	failed  map[string]error         // store → why its directory could not be made durable (not yet returned)
	// tickets counts the stores added; ticket is each store's, until Durable returns for it;
	// synced is the highest ticket a finished sync covered (every store added before it
	// started).
	tickets uint64
	ticket  map[string]uint64
	synced  uint64
	syncMu  sync.Mutex // held while a sync runs
}

// pendingDir is a directory stores were renamed in, to be made durable: held open (the
// rewrite's pinned directory, its own descriptor) so that the sync reaches the very directory
// the renames were made in, wherever its path leads by then (as root over a user's home, the
// user may have swapped it for a link or a FIFO: by path the sync failed for every directory
// of the file system, or synced another file system). pin is nil where directories are not
// held open (the path is used).
type pendingDir struct {
	dir    string
	pin    *dirPin
	stores []string
}

type dirSyncsKey struct{}

// WithDirSyncs returns a context whose rewrites (RewriteFile) leave the fsync of the store's
// directory after the rename to d instead of making it themselves.
func WithDirSyncs(ctx context.Context, d *DirSyncs) context.Context {
	return context.WithValue(ctx, dirSyncsKey{}, d)
}

// dirSyncsOf returns the context's DirSyncs, nil when the rewrite fsyncs its directory itself.
func dirSyncsOf(ctx context.Context) *DirSyncs {
	d, _ := ctx.Value(dirSyncsKey{}).(*DirSyncs)
	return d
}

// add records that path (a store) was renamed in its directory, held open by pin (nil: by
// path). The directory is held (a descriptor of its own) until it is synced.
func (d *DirSyncs) add(path string, pin *dirPin) {
	dir := filepath.Dir(path)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byDir == nil {
		d.byDir = map[string][]*pendingDir{}
	}
	if d.ticket == nil {
		d.ticket = map[string]uint64{}
	}
	d.tickets++
	d.ticket[path] = d.tickets
	var pd *pendingDir
	for _, e := range d.byDir[dir] {
		if pin.sameDir(e.pin) {
			pd = e
			break
		}
	}
	if pd == nil {
		held, err := pin.hold()
		if err != nil {
			held = nil // no descriptor to spare: by path, as before
		}
		pd = &pendingDir{dir: dir, pin: held}
		d.byDir[dir] = append(d.byDir[dir], pd)
		d.pending = append(d.pending, pd)
	}
	pd.stores = append(pd.stores, path)
}

// Durable returns once the rename of path (a store rewritten under WithDirSyncs) is durable:
// at once when a sync since covered it, else after one more sync (Sync), which covers every
// directory renamed in so far. It returns the error that kept path's directory from being made
// durable (once), nil when it was (or path was never added).
func (d *DirSyncs) Durable(path string) error {
	d.mu.Lock()
	t, added := d.ticket[path]
	d.mu.Unlock()
	if added {
		d.sync(t)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.ticket, path)
	err := d.failed[path]
	delete(d.failed, path)
	return err
}

// Sync makes every directory renamed in so far durable and returns, for each store whose
// directory could not be made so and whose error Durable did not return yet, that error (nil
// when none): the store holds its new bytes, but a power loss may undo the rename.
func (d *DirSyncs) Sync() map[string]error {
	d.mu.Lock()
	t := d.tickets
	d.mu.Unlock()
	d.sync(t)
	d.mu.Lock()
	defer d.mu.Unlock()
	failed := d.failed
	d.failed, d.ticket = nil, nil
	return failed
}

// dirSyncWorkers bounds the directory fsyncs a sync makes at once: concurrent fsyncs of
// directories changed in the same file-system transaction share its commit.
const dirSyncWorkers = 8

// sync makes the pending directories durable: where several of them lie on one file system
// whose syncfs(2) stands for their fsyncs (Linux 5.8 or newer; ext4, XFS, Btrfs, tmpfs: see
// syncfs_linux.go), one syncfs of it; elsewhere one SyncDir of each (up to dirSyncWorkers at
// once). It returns at once when a sync that started after ticket t was taken has finished.
// A failure is kept in d.failed for each store of the directory.
func (d *DirSyncs) sync(t uint64) {
	d.syncMu.Lock()
	defer d.syncMu.Unlock()
	d.mu.Lock()
	if d.synced >= t {
		d.mu.Unlock()
		return
	}
	pending, upto := d.pending, d.tickets
	d.pending, d.byDir = nil, nil
	d.mu.Unlock()
	defer func() {
		for _, pd := range pending {
			pd.pin.close()
		}
		d.mu.Lock()
		d.synced = upto
		d.mu.Unlock()
	}()
	if len(pending) == 0 {
		return
	}
	errs := make([]error, len(pending))
	// Directories by file system: one syncfs where it stands for their fsyncs.
	byFS := map[uint64][]int{}
	var single []int
	for i, pd := range pending {
		if dev, ok := fsKey(pd.dir, pd.pin); ok {
			byFS[dev] = append(byFS[dev], i)
		} else {
			single = append(single, i)
		}
	}
	for _, idx := range byFS {
		if len(idx) == 1 {
			single = append(single, idx[0])
			continue
		}
		first := pending[idx[0]]
		err := syncFS(first.dir, first.pin)
		for _, i := range idx {
			dir := pending[i].dir
			switch {
			case err != nil:
				errs[i] = err
			default:
				// The fault seam of the directory fsyncs this syncfs stands for.
				if ferr := Fault(FaultOpenDir, dir); ferr != nil {
					errs[i] = fmt.Errorf("open directory %s: %w", dir, ferr)
				} else if ferr := Fault(FaultSyncDir, dir); ferr != nil {
					errs[i] = fmt.Errorf("sync directory %s: %w", dir, ferr)
				}
			}
		}
	}
	if len(single) > 0 {
		next := make(chan int)
		var wg sync.WaitGroup
		for range min(dirSyncWorkers, len(single)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					errs[i] = syncDirAt(pending[i].dir, pending[i].pin)
				}
			}()
		}
		for _, i := range single {
			next <- i
		}
		close(next)
		wg.Wait()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, err := range errs {
		if err == nil {
			continue
		}
		if d.failed == nil {
			d.failed = map[string]error{}
		}
		for _, p := range pending[i].stores {
			d.failed[p] = err
		}
	}
}
