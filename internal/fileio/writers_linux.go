package fileio

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// An agent that keeps its session file open (a Node.js WriteStream, a Rust rollout writer) goes
// on writing to the old inode after the file is replaced: those writes would vanish from the
// session. Linux shows every process's open files under /proc/<pid>/fd, so a file another
// process holds open for writing is refused as in use. Processes of other users are not
// visible there without privileges; the kernel's own count of writers (a read lease is refused
// while any writable open exists) still refuses the file then, without a name.

// fileID is a file's device and inode.
type fileID struct{ dev, ino uint64 }

// openFD is one open file descriptor of another process.
type openFD struct {
	pid int
	fd  string
}

// procSnapshot maps files to the descriptors other processes hold on them.
type procSnapshot struct {
	at    time.Time
	files map[fileID][]openFD
}

var (
	procMu   sync.Mutex
	procSnap *procSnapshot
)

// procSnapshotTTL bounds how old the view of open files may be for the first check of a file
// (a full scan of /proc costs a few milliseconds). The checks that guard a rename always take
// a fresh view (openWritersFresh): an agent that opened the file while it was being copied
// must be seen.
const procSnapshotTTL = 250 * time.Millisecond

// snapshotOpenFilesAt returns the view of open files, a fresh one when fresh is set (the
// shared view is then replaced by it).
func snapshotOpenFilesAt(fresh bool) *procSnapshot {
	procMu.Lock()
	defer procMu.Unlock()
	if !fresh && procSnap != nil && time.Since(procSnap.at) < procSnapshotTTL {
		return procSnap
	}
	s := &procSnapshot{at: time.Now(), files: map[fileID][]openFD{}}
	self := os.Getpid()
	procs, err := os.ReadDir("/proc")
	if err != nil {
		procSnap = s
		return s
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue // gone, or another user's
		}
		for _, fd := range fds {
			var st syscall.Stat_t
			if syscall.Stat(filepath.Join(fdDir, fd.Name()), &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
				continue
			}
			id := fileID{uint64(st.Dev), st.Ino}
			s.files[id] = append(s.files[id], openFD{pid: pid, fd: fd.Name()})
		}
	}
	procSnap = s
	return s
}

// openWriters returns "pid N (command)" for each other process that holds the file of fi (open
// as f, read-only) open for writing (O_WRONLY or O_RDWR), as far as /proc shows. When the
// kernel says no process at all holds the inode open for writing (leaseProbe), /proc is not
// looked at; when the kernel counts a writer that /proc cannot name (a process of another user
// seen without privileges, a writable memory mapping whose descriptor is closed, or a descriptor
// of this process), the answer is unnamedWriter: the file is in use all the same.
func openWriters(f *os.File, fi os.FileInfo) []string {
	return writersOrUnnamed(f, fi, false)
}

// openWritersFresh is openWriters from a fresh scan of /proc (never a cached view).
func openWritersFresh(f *os.File, fi os.FileInfo) []string {
	return writersOrUnnamed(f, fi, true)
}

// unnamedWriter stands for a writer the kernel counts but /proc does not show.
const unnamedWriter = "a process sessionfix cannot name (the kernel counts a writer of this file: another user's process, or a writable memory mapping)"

func writersOrUnnamed(f *os.File, fi os.FileInfo, fresh bool) []string {
	lease := leaseProbe(f)
	if lease == leaseNoWriter {
		return nil
	}
	w := writersOf(idOfStat(fi), fresh)
	if len(w) == 0 && lease == leaseWriterCounted {
		return []string{unnamedWriter}
	}
	return w
}

// leaseAnswer is what a read-lease attempt tells about an inode's writers.
type leaseAnswer int

const (
	leaseUnknown       leaseAnswer = iota // not told: leases unsupported, disabled, not permitted
	leaseNoWriter                         // granted: no writable open of the inode anywhere
	leaseWriterCounted                    // EAGAIN: the kernel counts a writable open
)

// leaseProbe asks whether any process, of any user, holds the inode of f (opened read-only)
// open for writing, as the kernel counts it (leaseNoWriter: none; leaseWriterCounted: one): a
// read lease (fcntl F_SETLEASE F_RDLCK) is granted only when the inode's count of writable open
// files is zero (fcntl(2), "Leases"; fs/locks.c check_conflicting_open). The lease is released at once (an open for writing
// that comes meanwhile waits those microseconds for the release). It is a stronger question
// than /proc answers (processes of other users, and writable mappings whose descriptor is
// closed, count), and costs two system calls instead of a walk of every process's
// descriptors. leaseUnknown when it cannot be told (leases not supported by the file system or
// disabled, a file of another owner without CAP_LEASE): /proc is looked at then.
func leaseProbe(f *os.File) leaseAnswer {
	if f == nil {
		return leaseUnknown
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return leaseUnknown
	}
	answer := leaseUnknown
	_ = rc.Control(func(fd uintptr) {
		_, err := unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_RDLCK)
		switch {
		case err == nil:
			answer = leaseNoWriter
			_, _ = unix.FcntlInt(fd, unix.F_SETLEASE, unix.F_UNLCK)
		case err == unix.EAGAIN:
			answer = leaseWriterCounted
		}
	})
	return answer
}

func writersOf(id fileID, fresh bool) []string {
	if id == (fileID{}) {
		return nil
	}
	var out []string
	for _, o := range snapshotOpenFilesAt(fresh).files[id] {
		// The snapshot may be up to procSnapshotTTL old and inode numbers are reused: check
		// that the descriptor still points at this file.
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join("/proc", strconv.Itoa(o.pid), "fd", o.fd), &st) != nil || (fileID{uint64(st.Dev), st.Ino}) != id {
			continue
		}
		if !fdWritable(o) {
			continue
		}
		out = append(out, "pid "+strconv.Itoa(o.pid)+" ("+procComm(o.pid)+")")
	}
	return out
}

// fdWritable reads the descriptor's open flags from /proc/<pid>/fdinfo/<fd>.
func fdWritable(o openFD) bool {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(o.pid), "fdinfo", o.fd))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&(syscall.O_WRONLY|syscall.O_RDWR) != 0
		}
	}
	return false
}

func procComm(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// idOfStat is the fileID of fi (zero when unknown).
func idOfStat(fi os.FileInfo) fileID {
	st, _ := fi.Sys().(*syscall.Stat_t)
	if st == nil {
		return fileID{}
	}
	return fileID{uint64(st.Dev), st.Ino}
}

// openWatch sees every open of one inode (inotify IN_OPEN) from the moment it is set: when it
// saw none, no process can have got a descriptor of the file since (the kernel reports the
// open before the descriptor is installed), and /proc need not be scanned again. All watches
// share one inotify instance (closing an instance costs milliseconds).
type openWatch struct {
	wd int
}

var inotify struct {
	mu     sync.Mutex
	fd     int // 0: not opened yet; -1: unavailable
	opened map[int]bool
}

// watchOpens starts watching path's inode; nil when inotify is not available (every question
// is then answered "opened", the safe side).
func watchOpens(path string) *openWatch {
	inotify.mu.Lock()
	defer inotify.mu.Unlock()
	if inotify.fd == 0 {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			inotify.fd = -1
		} else {
			inotify.fd, inotify.opened = fd, map[int]bool{}
		}
	}
	if inotify.fd < 0 {
		return nil
	}
	drainInotify() // events of earlier watches with a reused number are not this one's
	wd, err := unix.InotifyAddWatch(inotify.fd, path, unix.IN_OPEN)
	if err != nil {
		return nil
	}
	if _, dup := inotify.opened[wd]; dup {
		return nil // the same inode watched twice at once: cannot tell the two apart
	}
	inotify.opened[wd] = false
	return &openWatch{wd: wd}
}

// drainInotify reads the pending events into inotify.opened (mu held).
func drainInotify() {
	var buf [4096]byte
	for {
		n, err := unix.Read(inotify.fd, buf[:])
		if n <= 0 || err != nil {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			if seen, ok := inotify.opened[int(ev.Wd)]; ok && !seen && (ev.Mask&(unix.IN_OPEN|unix.IN_Q_OVERFLOW) != 0) {
				inotify.opened[int(ev.Wd)] = true
			}
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				for wd := range inotify.opened {
					inotify.opened[wd] = true
				}
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// opened reports whether the inode was opened since the watch was set (true when unknown).
func (w *openWatch) opened() bool {
	if w == nil {
		return true
	}
	inotify.mu.Lock()
	defer inotify.mu.Unlock()
	drainInotify()
	return inotify.opened[w.wd]
}

func (w *openWatch) close() {
	if w == nil {
		return
	}
	inotify.mu.Lock()
	defer inotify.mu.Unlock()
	_, _ = unix.InotifyRmWatch(inotify.fd, uint32(w.wd))
	delete(inotify.opened, w.wd)
}
