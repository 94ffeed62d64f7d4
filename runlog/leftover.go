package runlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"

	"github.com/sessionfix/sessionfix/internal/fileio"
)

// Leftover is a temp file a killed run or undo left, removed by CleanLeftovers.
type Leftover struct {
	Path  string `json:"path"`
	RunID string `json:"run_id"`
	// Store is the file the temp was for ("" for a manifest temp).
	Store string `json:"store,omitempty"`
	// Err is set when the file could not be removed.
	Err error `json:"-"`
}

// CleanLeftovers removes the temp files of runs (and undos) under stateDir that were killed:
// a file is removed only when it is provably sessionfix's own, that is
//
//   - a store's temp (".<name><digits>" beside it) that the run's journal announced
//     (fileio.TempCreating) and never marked gone, or
//   - a manifest temp (".manifest.json<digits>") inside the run's own directory;
//
// and it is a regular file, the run's journal is not locked by a live sessionfix process, and
// the store is not locked either. It returns what it removed (or failed to remove). Temp files
// of versions that did not journal them are left to scan's warning.
func CleanLeftovers(stateDir string) ([]Leftover, error) {
	ents, err := os.ReadDir(filepath.Join(stateDir, runsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var out []Leftover
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(stateDir, runsDir, e.Name())
		out = append(out, cleanRun(dir, e.Name())...)
	}
	return out, nil
}

// cleanRun is CleanLeftovers for one run directory (id its name): when its journal is the
// effective user's and no live process holds it, it removes the run's manifest temps and the
// store temps its journal announced and never saw gone (removeStoreTemps), then journals those
// as gone.
func cleanRun(dir, id string) []Leftover {
	jpath := filepath.Join(dir, journalName)
	if _, err := os.Stat(jpath); err != nil {
		return nil
	}
	if writableByOthers(dir) != "" {
		return nil // its journal could name any file to remove (undo says why)
	}
	lk := flock.New(jpath)
	if ok, err := lk.TryLock(); err != nil || !ok {
		return nil // a live run or undo (or no journal)
	}
	defer lk.Unlock()
	var out []Leftover
	// Manifest temps of this run.
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if fileio.IsTempName(e.Name(), manifestName) {
				out = removeLeftover(out, Leftover{Path: filepath.Join(dir, e.Name()), RunID: id})
			}
		}
	}
	// Store temps the journal announced and never saw gone.
	order, open, err := announcedTemps(jpath)
	if err != nil {
		return out
	}
	out, gone, unlock := removeStoreTemps(out, id, order, open)
	defer unlock()
	if len(gone) > 0 {
		appendGone(jpath, gone)
	}
	return out
}

// removeLeftover removes l.Path when it is a regular file and adds l to out (with Err set when
// it could not be removed); anything else is left alone and out returned as it is.
func removeLeftover(out []Leftover, l Leftover) []Leftover {
	fi, err := os.Lstat(l.Path)
	if err != nil || !fi.Mode().IsRegular() {
		return out
	}
	if err := os.Remove(l.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		l.Err = err
	}
	return append(out, l)
}

// announcedTemps reads the journal at path line by line (it holds every entry: it grows with
// the run) and returns the temp files it announced (fileio.TempCreating) and never saw gone or
// foreign, in the order first announced, with the store each is for (open). A line whose seal
// fails names no file to remove, nor does one that does not decode.
func announcedTemps(path string) (order []string, open map[string]string, err error) {
	jf, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer jf.Close()
	open = map[string]string{}
	jr := bufio.NewReader(jf)
	for {
		line, rerr := jr.ReadBytes('\n')
		if rerr != nil && len(line) == 0 {
			break
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		var je journalEntry
		if sealed, ok := checkSeal(line, journalSealPrefix); sealed && !ok {
			continue // an edited line names no file to remove
		}
		if json.Unmarshal(line, &je) != nil {
			continue
		}
		switch je.Event {
		case fileio.TempCreating:
			if _, ok := open[je.Path]; !ok {
				order = append(order, je.Path)
			}
			open[je.Path] = je.Store
		case fileio.TempForeign, fileio.TempGone:
			delete(open, je.Path)
		}
	}
	return order, open, nil
}

// removeStoreTemps removes the announced temps (order, open: announcedTemps) of the run id
// that are still there, each only when it is a temp sibling of its store ("." + the store's
// name + digits, beside it), a regular file, and no other process locks that store; it returns
// out with what it removed added (and each temp it could not reach or remove, with Err), the
// journal lines that record them gone (also for a temp not found), and unlock, which lets go of
// the store locks taken (each store is locked once and held until the caller has journaled: a
// second flock of ours would fail against the first). Each store's directory is held open
// (fileio.OpenLeftoverDir) and the lock, lstat and removal go through it: as root, a link on
// the way that owner.LinkRefusal refuses (a user swapping a directory of their home for a link
// to another's) reaches nothing, and the temp is reported with that error, not journaled gone.
func removeStoreTemps(out []Leftover, id string, order []string, open map[string]string) ([]Leftover, []journalEntry, func()) {
	var gone []journalEntry
	var held []func()
	unlock := func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i]()
		}
	}
	type storeDir struct {
		dir    *fileio.LeftoverDir
		err    error // the directory could not be held open
		locked bool  // the store's lock was tried
		busy   bool  // another process locks the store
	}
	dirs := map[string]*storeDir{}
	defer func() {
		for _, sd := range dirs {
			if sd.dir != nil {
				sd.dir.Close()
			}
		}
	}()
	for _, tmp := range order {
		target, ok := open[tmp]
		if !ok || target == "" || filepath.Dir(tmp) != filepath.Dir(target) || !fileio.IsTempName(filepath.Base(tmp), filepath.Base(target)) {
			continue
		}
		sd := dirs[target]
		if sd == nil {
			sd = &storeDir{}
			dirs[target] = sd
			sd.dir, sd.err = fileio.OpenLeftoverDir(target)
		}
		if sd.err != nil && errors.Is(sd.err, fileio.ErrNotTheFile) {
			out = append(out, Leftover{Path: tmp, RunID: id, Store: target, Err: sd.err})
			continue
		}
		if sd.err != nil {
			gone = append(gone, journalEntry{Event: fileio.TempGone, Path: tmp, Store: target, Reason: "not found by cleanup"})
			continue
		}
		if _, err := sd.dir.Lstat(tmp); err != nil {
			gone = append(gone, journalEntry{Event: fileio.TempGone, Path: tmp, Store: target, Reason: "not found by cleanup"})
			continue
		}
		if !sd.locked {
			// Locked by its descriptor: never created, no link followed (a lock by name opens
			// it O_CREAT: as root, a user's store replaced by a link to a file that does not
			// exist would have it created).
			release, busy, _ := sd.dir.TryLockStore()
			sd.locked, sd.busy = true, busy
			held = append(held, release)
		}
		if sd.busy {
			// A store another process locks (a sessionfix run using its own journal) keeps its
			// temp.
			continue
		}
		if removed, err := sd.dir.RemoveTemp(tmp); removed {
			out = append(out, Leftover{Path: tmp, RunID: id, Store: target, Err: err})
			if err == nil {
				gone = append(gone, journalEntry{Event: fileio.TempGone, Path: tmp, Store: target, Reason: "removed by cleanup"})
			}
		}
	}
	return out, gone, unlock
}

// appendGone appends the sealed lines gone to the journal at path (after cutting a torn last
// line), best effort: a write cut short (a full disk) is truncated back, so no half line stays.
func appendGone(path string, gone []journalEntry) {
	if err := cutTornTail(path); err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	var buf []byte
	for _, g := range gone {
		if b, err := marshalJournalLine(g); err == nil {
			buf = append(buf, b...)
		}
	}
	if fi, err := f.Stat(); err == nil {
		if n, err := f.Write(buf); err != nil && n > 0 {
			_ = f.Truncate(fi.Size()) // no half line (a full disk)
		}
	}
	_ = f.Sync()
}
