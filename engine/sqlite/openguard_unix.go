//go:build unix

package sqlite

/*
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// SQLite's VFS object, as sqlite3.h declares it (iVersion 3): only the system-call methods are
// used here. mattn/go-sqlite3 compiles the amalgamation into the binary (or links the system
// library with its libsqlite3 build tag); sqlite3_vfs_find is its entry point.
typedef void (*sf_syscall_ptr)(void);
typedef struct sqlite3_vfs sqlite3_vfs;
struct sqlite3_vfs {
	int iVersion;
	int szOsFile;
	int mxPathname;
	sqlite3_vfs *pNext;
	const char *zName;
	void *pAppData;
	void *xOpen, *xDelete, *xAccess, *xFullPathname, *xDlOpen, *xDlError, *xDlSym, *xDlClose;
	void *xRandomness, *xSleep, *xCurrentTime, *xGetLastError;
	void *xCurrentTimeInt64;
	int (*xSetSystemCall)(sqlite3_vfs*, const char*, sf_syscall_ptr);
	sf_syscall_ptr (*xGetSystemCall)(sqlite3_vfs*, const char*);
	const char *(*xNextSystemCall)(sqlite3_vfs*, const char*);
};
extern sqlite3_vfs *sqlite3_vfs_find(const char*);

typedef int (*sf_open_fn)(const char*, int, int);
static sf_open_fn sf_real_open;

// What this thread's connection must open (sf_arm .. sf_disarm): armed is 1 until the first
// regular file that is no journal, WAL or shm is opened (the database), 2 after; refused is
// sticky (SQLite retries a failed read-write open read-only).
static __thread int sf_armed, sf_refused, sf_why;
static __thread unsigned long long sf_dev, sf_ino, sf_got_dev, sf_got_ino;
static __thread unsigned int sf_got_mode;

// sf_sidecar: a name SQLite gives a database's own files (journal, WAL, shared memory).
static int sf_sidecar(const char *path) {
	size_t n = strlen(path);
	static const char *ends[] = {"-journal", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		size_t m = strlen(ends[i]);
		if (n > m && strcmp(path + n - m, ends[i]) == 0) return 1;
	}
	return 0;
}

// sf_open is every open(2) of SQLite's unix VFSes: O_NONBLOCK added (a FIFO swapped in for a
// database, journal or WAL does not block the thread, which no signal would free), then fstat:
// a regular file (or a directory, opened to fsync it; or /dev/null), not a journal/WAL/shm with
// other hard links (another file's content read as a hot journal, or overwritten as one), and,
// while armed, the first regular file must be the armed device and inode. A refused open fails
// with EACCES; the flag is cleared again on what is kept.
static int sf_open(const char *path, int flags, int mode) {
	int fd = sf_real_open(path, flags | O_NONBLOCK, mode);
	if (fd < 0) return fd;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	int why = 0; // 1: not a regular file, 2: not the armed file, 3: a journal with other links
	if (S_ISDIR(st.st_mode)) {
	} else if (!S_ISREG(st.st_mode)) {
		if (!(S_ISCHR(st.st_mode) && strcmp(path, "/dev/null") == 0)) why = 1;
	} else if (st.st_nlink > 1 && sf_sidecar(path)) {
		why = 3;
	} else if (sf_armed == 1 && !sf_sidecar(path)) {
		// The database itself (a journal, WAL or shm of a database this process already has
		// open may come first: SQLite reuses a descriptor it could not close, and opens no file).
		sf_armed = 2;
		if ((unsigned long long)st.st_dev != sf_dev || (unsigned long long)st.st_ino != sf_ino) why = 2;
	}
	if (sf_armed && sf_refused && !why) why = sf_why;
	if (why) {
		if (sf_armed && !sf_refused) {
			sf_refused = 1;
			sf_why = why;
			sf_got_dev = st.st_dev;
			sf_got_ino = st.st_ino;
			sf_got_mode = st.st_mode;
		}
		close(fd);
		errno = EACCES;
		return -1;
	}
	if (!(flags & O_NONBLOCK)) {
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	return fd;
}

static int sf_install(void) {
	sqlite3_vfs *v = sqlite3_vfs_find(0);
	if (!v || v->iVersion < 3 || !v->xSetSystemCall || !v->xGetSystemCall) return -1;
	sf_real_open = (sf_open_fn)v->xGetSystemCall(v, "open");
	if (!sf_real_open) return -2;
	return v->xSetSystemCall(v, "open", (sf_syscall_ptr)sf_open);
}

static void sf_arm(unsigned long long dev, unsigned long long ino) {
	sf_armed = 1;
	sf_refused = 0;
	sf_dev = dev;
	sf_ino = ino;
}

// sf_disarm ends the armed window; it returns why a file was refused in it (0: none; 1: not a
// regular file, 2: not the armed file, 3: a journal, WAL or shm with other hard links; what it
// was in *dev, *ino, *mode).
static int sf_disarm(unsigned long long *dev, unsigned long long *ino, unsigned int *mode) {
	int r = sf_refused ? sf_why : 0;
	*dev = sf_got_dev;
	*ino = sf_got_ino;
	*mode = sf_got_mode;
	sf_armed = sf_refused = 0;
	return r;
}
*/
import "C"

import (
	"fmt"
	"io/fs"
	"runtime"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

// guardErr is why the open guard could not be installed (nil when it is in place).
var guardErr error

func init() {
	if rc := C.sf_install(); rc != 0 {
		guardErr = fmt.Errorf("the SQLite open guard could not be installed (code %d): SQLite stores are not opened", int(rc))
	}
}

// pinnedOpen runs open (a database/sql connect that opens the database file, on the calling
// goroutine: database/sql opens a new connection in the caller) on a locked OS thread armed
// with want: the first regular file SQLite opens there must be want's device and inode. It
// returns refused when SQLite was refused a file (the database was another file than want, or a
// FIFO, device or shared journal: the open failed), with what it found.
func pinnedOpen(want store.FileID, open func() error) (refused refusal, got store.FileID, mode fs.FileMode, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	C.sf_arm(C.ulonglong(want.Dev), C.ulonglong(want.Ino))
	err = open()
	var dev, ino C.ulonglong
	var m C.uint
	refused = refusal(C.sf_disarm(&dev, &ino, &m))
	return refused, store.FileID{Dev: uint64(dev), Ino: uint64(ino)}, fileio.FileMode(uint32(m)), err
}
