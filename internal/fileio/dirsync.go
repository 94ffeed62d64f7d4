package fileio

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
)

// groupSyncs is the group commit of one kind of flush (a directory's fsync, a file system's
// syncfs), per key (the directory, the file system's device): one flush that starts after a
// change was made covers every change made before it, as the run journal's group commit does
// for lines. Concurrent rewrites whose changes share a key share flushes.
type groupSyncs[K comparable] struct {
	mu sync.Mutex
	m  map[K]*groupSync
}

// groupSync is the group-commit state of one key. tickets counts the requests: a request
// takes its ticket after its change was made (link, create, write). synced is the highest
// ticket a flush has covered: one whose ticket had been taken before that flush started.
type groupSync struct {
	mu      sync.Mutex // guards tickets
	smu     sync.Mutex // held for the flush; guards synced, failed and failErr
	tickets uint64
	synced  uint64
	// failed is the highest ticket a failed flush covered, failErr its error (guarded by smu).
	failed  uint64
	failErr error
	users   int // requests in progress (the entry is dropped at zero; guarded by groupSyncs.mu)
}

// wait returns once every change made under key before the call is durable: at once when a
// flush of key that started after the call's ticket was taken has completed (another
// request's), else after one more flush (a call of flush), which covers every ticket taken so
// far. A failed flush makes nothing durable, and its error goes to every request whose ticket
// it covered: Linux reports a writeback error to one fsync or syncfs only (errseq), so their
// own retry could succeed without their change on disk. A request after it has its own flush.
func (gs *groupSyncs[K]) wait(key K, flush func() error) error {
	gs.mu.Lock()
	if gs.m == nil {
		gs.m = map[K]*groupSync{}
	}
	g := gs.m[key]
	if g == nil {
		g = &groupSync{}
		gs.m[key] = g
	}
	g.users++
	gs.mu.Unlock()
	defer func() {
		gs.mu.Lock()
		if g.users--; g.users == 0 {
			delete(gs.m, key)
		}
		gs.mu.Unlock()
	}()

	g.mu.Lock()
	g.tickets++
	t := g.tickets
	g.mu.Unlock()

	g.smu.Lock()
	defer g.smu.Unlock()
	if g.failed >= t {
		// Checked first: a later flush's success does not prove a change an earlier one
		// failed to write is on disk.
		return g.failErr
	}
	if g.synced >= t {
		return nil
	}
	g.mu.Lock()
	upto := g.tickets // every ticket taken so far: its change exists before this flush starts
	g.mu.Unlock()
	if err := flush(); err != nil {
		g.failed, g.failErr = upto, err
		return err
	}
	g.synced = upto
	return nil
}

// ticketsOf returns how many tickets key's group has given (0 when nobody waits). For tests.
func (gs *groupSyncs[K]) ticketsOf(key K) uint64 {
	gs.mu.Lock()
	g := gs.m[key]
	gs.mu.Unlock()
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tickets
}

// dirSyncs groups the directory fsyncs of concurrent rewrites that share a directory (every
// backup of a run is made in its run's backups/) where no syncfs stands for them (sharedFS).
var dirSyncs groupSyncs[string]

// syncDirGrouped returns once every entry made in dir before the call is durable: one SyncDir
// of dir shared with the other requests (groupSyncs.wait).
func syncDirGrouped(dir string) error {
	return dirSyncs.wait(dir, func() error { return SyncDir(dir) })
}

// fsSyncs groups the syncfs(2) calls of a file system (by device): one stream of rounds that
// serves every request alike, a rewrite's before its rename (its temp, its backup's name:
// syncShared) and a run's renames after (DirSyncs).
var fsSyncs groupSyncs[uint64]

// syncFSGrouped returns once every change made on the file system dev before the call (a
// create, link, rename, a file's data written back and its metadata) is durable: one syncfs(2)
// of it (through dir, a directory on it held open by pin: syncFS) shared with the other
// requests (groupSyncs.wait).
// Only where fsKey said that syncfs stands for fsyncs there.
//
// What it costs: syncfs writes back every dirty page of the file system (other processes' too,
// where an fsync writes back one file's), commits its journal and, on ext4, writes the block
// device's dirty metadata buffers in place (sync_blockdev): a request waits for what other
// processes dirtied on the same file system before its round started, and the disk gets more,
// smaller writes (make bench's dense apply on ext4: 3,000 → 4,650 write requests a run, for
// 690 → 460 cache flushes and less device busy time). That is accepted as it was for the
// renames (c2c5cec): the file system is the user's home, where a run's own temps are most of
// what is dirty, and a round serves every store waiting; a large write in progress on the same
// file system makes the run slower, never less safe.
func syncFSGrouped(dev uint64, dir string, pin *dirPin) error {
	return fsSyncs.wait(dev, func() error { return syncFS(dir, pin) })
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
// syncfs_linux.go), one syncfs round of it, shared with the rewrites that wait for one before
// their renames (syncFSGrouped: a round that starts after these renames serves them all);
// elsewhere one SyncDir of each (up to dirSyncWorkers at once). It returns at once when a sync
// that started after ticket t was taken has finished. A failure is kept in d.failed for each
// store of the directory.
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
	for dev, idx := range byFS {
		if len(idx) == 1 {
			single = append(single, idx[0])
			continue
		}
		first := pending[idx[0]]
		err := syncFSGrouped(dev, first.dir, first.pin)
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
