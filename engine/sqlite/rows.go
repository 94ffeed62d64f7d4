package sqlite

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The few SQLite entry points the row reader calls: the amalgamation mattn/go-sqlite3 compiles
// into the binary provides them (or the system library with its libsqlite3 build tag).
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
extern int sqlite3_prepare_v2(sqlite3*, const char*, int, sqlite3_stmt**, const char**);
extern int sqlite3_finalize(sqlite3_stmt*);
extern int sqlite3_reset(sqlite3_stmt*);
extern int sqlite3_clear_bindings(sqlite3_stmt*);
extern int sqlite3_step(sqlite3_stmt*);
extern int sqlite3_column_type(sqlite3_stmt*, int);
extern const void *sqlite3_column_blob(sqlite3_stmt*, int);
extern const unsigned char *sqlite3_column_text(sqlite3_stmt*, int);
extern int sqlite3_column_bytes(sqlite3_stmt*, int);
extern long long sqlite3_column_int64(sqlite3_stmt*, int);
extern double sqlite3_column_double(sqlite3_stmt*, int);
extern int sqlite3_bind_int64(sqlite3_stmt*, int, long long);
extern int sqlite3_bind_text(sqlite3_stmt*, int, const char*, int, void(*)(void*));
extern int sqlite3_bind_blob(sqlite3_stmt*, int, const void*, int, void(*)(void*));
extern int sqlite3_bind_double(sqlite3_stmt*, int, double);
extern int sqlite3_changes(sqlite3*);
extern const char *sqlite3_errmsg(sqlite3*);
extern int sqlite3_extended_errcode(sqlite3*);

#include "sfcol.h"

#define SF_FULL (-1)

// sf_rows steps st for up to maxrows rows of ncol columns, copying each row's columns into
// cols[row*ncol+k] and their bytes into buf (cap bytes, *used so far). pending: the statement
// already stands on a row (the one that did not fit last time). Returns SQLITE_ROW (100) when
// maxrows rows were read, SQLITE_DONE (101) at the end, SF_FULL when the next row does not fit
// in buf (*need: the bytes it needs; the statement stays on it), or SQLite's error code
// (SQLITE_NOMEM when a TEXT or BLOB value could not be had).
static int sf_rows(sqlite3_stmt *st, int ncol, int pending, int maxrows, char *buf, long long cap,
		long long *used, sf_col *cols, int *nrows, long long *need) {
	long long u = *used;
	int n = 0;
	for (; n < maxrows; n++) {
		if (!pending) {
			int rc = sqlite3_step(st);
			if (rc != 100) {
				*nrows = n;
				*used = u;
				return rc;
			}
		}
		pending = 0;
		sf_col *c = cols + (long long)n * ncol;
		long long size = 0;
		for (int k = 0; k < ncol; k++) {
			int t = sqlite3_column_type(st, k);
			c[k].kind = t;
			c[k].n = 0;
			c[k].off = 0;
			if (t == 1) {
				c[k].i = sqlite3_column_int64(st, k);
			} else if (t == 2) {
				c[k].f = sqlite3_column_double(st, k);
			} else if (t == 3 || t == 4) {
				// text first, then its length (the order SQLite documents as safe)
				const void *p = t == 3 ? (const void *)sqlite3_column_text(st, k) : sqlite3_column_blob(st, k);
				long long b = sqlite3_column_bytes(st, k);
				if (p == 0 && (t == 3 || b > 0)) {
					// SQLite could not give the value (an allocation failure, e.g. converting
					// UTF-16 text: NULL and 0 bytes); a TEXT pointer is never NULL otherwise, a
					// BLOB's only when it is empty. An error, not an empty value: the
					// statement's own error would be cleared by the next reset.
					*nrows = n;
					*used = u;
					return 7; // SQLITE_NOMEM
				}
				if (u + size + b > cap) {
					long long rest = 0;
					for (int j = k + 1; j < ncol; j++) {
						rest += sqlite3_column_bytes(st, j);
					}
					*need = size + b + rest;
					*nrows = n;
					*used = u;
					return SF_FULL;
				}
				if (b > 0) {
					memcpy(buf + u + size, p, (size_t)b);
				}
				c[k].off = u + size;
				c[k].n = b;
				size += b;
			}
		}
		u += size;
	}
	*nrows = n;
	*used = u;
	return 100;
}

static int sf_bind_text(sqlite3_stmt *st, int i, const char *p, int n) {
	return sqlite3_bind_text(st, i, p, n, (void (*)(void *))(intptr_t)-1); // SQLITE_TRANSIENT
}

// sf_exec binds p[0:n] as parameter 1 (TEXT when text, else BLOB; SQLITE_TRANSIENT: SQLite
// copies the bytes, nothing of Go's is kept after the call) and steps st to its end. Returns
// SQLite's code (SQLITE_DONE on success; the statement is left for the caller to reset, so
// an error's message is still there) and, in *changes, the rows the statement changed.
static int sf_exec(sqlite3 *db, sqlite3_stmt *st, int text, const char *p, int n, int *changes) {
	void (*transient)(void *) = (void (*)(void *))(intptr_t)-1;
	int rc = text ? sqlite3_bind_text(st, 1, n ? p : "", n, transient)
		: sqlite3_bind_blob(st, 1, n ? (const void *)p : (const void *)"", n, transient);
	if (rc != 0) {
		return rc;
	}
	do {
		rc = sqlite3_step(st);
	} while (rc == 100);
	*changes = sqlite3_changes(db);
	return rc;
}
*/
import "C"

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"unsafe"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// The row reader of the scan (issue 12 item 3): mattn/go-sqlite3 copies every TEXT value into a
// new Go string and boxes it into a driver.Value (two allocations per column, the garbage
// collector's work after); this reader steps the statement in C on the same connection (the
// driver's *sqlite3 handle) and copies up to a batch of rows into one reused buffer per
// crossing. The values are the driver's for the same SELECT: the storage class of each column
// (no declared-type conversion: the scan selects `+col`), TEXT bytes as SQLite returns them.

// sfCol is one column of one row read (C's sf_col).
type sfCol = C.sf_col

// Storage classes of a column (SQLite's codes).
const (
	kindInt   = 1
	kindFloat = 2
	kindText  = 3
	kindBlob  = 4
	kindNull  = 5
)

// rowBatch is rows read into one buffer: column k of row i is cols[i*width+k], its bytes in buf.
type rowBatch struct {
	width int
	n     int // rows
	buf   []byte
	used  int64
	cols  []C.sf_col
	// ext: the extractor's result per row (extractRows), for a table with a fast path
	ext []int64
}

// bytes returns the bytes of a TEXT or BLOB column (valid until the batch is reused).
func (b *rowBatch) bytes(c *C.sf_col) []byte {
	off, n := int64(c.off), int64(c.n)
	return b.buf[off : off+n : off+n]
}

// str returns the TEXT of a column as a string sharing the buffer (valid until the batch is
// reused: clone what must outlive it).
func (b *rowBatch) str(c *C.sf_col) string {
	if c.n == 0 {
		return ""
	}
	return unsafe.String(&b.buf[c.off], int(c.n))
}

// value returns a column as the driver would (int64, float64, string, []byte, nil), copied.
func (b *rowBatch) value(c *C.sf_col) any {
	switch c.kind {
	case kindInt:
		return int64(c.i)
	case kindFloat:
		return float64(c.f)
	case kindText:
		return string(b.bytes(c))
	case kindBlob:
		return append([]byte{}, b.bytes(c)...)
	}
	return nil
}

// row returns the columns of row i.
func (b *rowBatch) row(i int) []C.sf_col {
	return b.cols[i*b.width : (i+1)*b.width : (i+1)*b.width]
}

func newRowBatch(width, rows int) *rowBatch {
	return &rowBatch{width: width, buf: make([]byte, 256<<10), cols: make([]C.sf_col, width*rows)}
}

// stepError is an error SQLite returned while stepping: its message, and the code as the
// driver's sqlite3.Error (errors.As finds it: isBusy).
type stepError struct {
	msg string
	err sqlite3.Error
}

func (e *stepError) Error() string { return e.msg }
func (e *stepError) Unwrap() error { return e.err }

// rowStmt is a statement prepared on the driver connection's handle.
type rowStmt struct {
	db *C.sqlite3
	st *C.sqlite3_stmt
}

// prepareRows prepares query on the handle of c (the driver's own connection: its busy
// timeout, open transaction and flags apply).
func prepareRows(c *sqlite3.SQLiteConn, query string) (*rowStmt, error) {
	f := reflect.ValueOf(c).Elem().FieldByName("db")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() {
		return nil, fmt.Errorf("the SQLite driver connection has no open handle (driver version not supported by the row reader)")
	}
	s := &rowStmt{db: (*C.sqlite3)(f.UnsafePointer())}
	cq := C.CString(query)
	defer C.free(unsafe.Pointer(cq))
	if rc := C.sqlite3_prepare_v2(s.db, cq, -1, &s.st, nil); rc != 0 {
		return nil, s.err(rc)
	}
	return s, nil
}

func (s *rowStmt) err(rc C.int) error {
	return &stepError{msg: C.GoString(C.sqlite3_errmsg(s.db)),
		err: sqlite3.Error{Code: sqlite3.ErrNo(rc & 0xff), ExtendedCode: sqlite3.ErrNoExtended(C.sqlite3_extended_errcode(s.db))}}
}

func (s *rowStmt) close() { C.sqlite3_finalize(s.st) }

// reset ends the statement's current run (its result is moot: an error of the run came back
// from the step that met it).
func (s *rowStmt) reset() { C.sqlite3_reset(s.st) }

// start resets the statement and binds args (int64 or string, positional). An error the
// statement still holds from its last rows (an allocation failure inside a sqlite3_column_*
// call after the last step: SQLite reports it at the next step or at this reset) is returned,
// not cleared.
func (s *rowStmt) start(args []any) error { return s.startAt(1, args) }

// startAt is start with args bound from parameter first on (the ones before left unbound),
// float64 arguments too.
func (s *rowStmt) startAt(first int, args []any) error {
	if rc := C.sqlite3_reset(s.st); rc != 0 {
		return s.err(rc)
	}
	C.sqlite3_clear_bindings(s.st)
	for j, a := range args {
		var rc C.int
		i := j + first - 1
		switch v := a.(type) {
		case int64:
			rc = C.sqlite3_bind_int64(s.st, C.int(i+1), C.longlong(v))
		case float64:
			rc = C.sqlite3_bind_double(s.st, C.int(i+1), C.double(v))
		case string:
			if len(v) > math.MaxInt32 {
				return fmt.Errorf("row reader: argument %d: %w", i+1, tooLong(len(v)))
			}
			p := C.CString(v)
			rc = C.sf_bind_text(s.st, C.int(i+1), p, C.int(len(v)))
			C.free(unsafe.Pointer(p))
		default:
			return fmt.Errorf("row reader: argument %d of type %T", i+1, a)
		}
		if rc != 0 {
			return s.err(rc)
		}
	}
	return nil
}

// exec runs a statement whose parameter 1 is val (TEXT when text, else BLOB) and whose other
// parameters startAt(2, …) bound, to its end; it returns the rows it changed
// (sqlite3_changes: not counting what triggers did).
func (s *rowStmt) exec(text bool, val []byte) (int, error) {
	if len(val) > math.MaxInt32 {
		C.sqlite3_reset(s.st)
		return 0, tooLong(len(val))
	}
	var p *C.char
	if len(val) > 0 {
		p = (*C.char)(unsafe.Pointer(&val[0]))
	}
	var changes C.int
	rc := C.sf_exec(s.db, s.st, C.int(btoi(text)), p, C.int(len(val)), &changes)
	if rc != 101 {
		err := s.err(rc)
		C.sqlite3_reset(s.st)
		return 0, err
	}
	if rc := C.sqlite3_reset(s.st); rc != 0 {
		return 0, s.err(rc)
	}
	return int(changes), nil
}

// tooLong is the error for a value of n bytes that SQLite's int lengths cannot give (C.int(n)
// would cut it: a value stored short, or from 2 GiB on a negative length, which
// sqlite3_bind_text reads as "up to a NUL byte").
func tooLong(n int) error {
	return &stepError{msg: fmt.Sprintf("a value of %d bytes is longer than SQLite takes (at most %d)", n, math.MaxInt32),
		err: sqlite3.Error{Code: sqlite3.ErrTooBig, ExtendedCode: sqlite3.ErrNoExtended(sqlite3.ErrTooBig)}}
}

// read appends up to max rows to b (growing its buffer for a row that does not fit); done is
// true when the statement has no more rows.
func (s *rowStmt) read(ctx context.Context, b *rowBatch, max int) (done bool, err error) {
	pending := C.int(0)
	for b.n < max {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		var nrows C.int
		var need C.longlong
		used := C.longlong(b.used)
		rc := C.sf_rows(s.st, C.int(b.width), pending, C.int(min(max-b.n, 256)),
			(*C.char)(unsafe.Pointer(&b.buf[0])), C.longlong(len(b.buf)), &used,
			&b.cols[b.n*b.width], &nrows, &need)
		b.n += int(nrows)
		b.used = int64(used)
		pending = 0
		switch rc {
		case 100: // SQLITE_ROW: that many rows read
		case 101: // SQLITE_DONE
			return true, nil
		case C.SF_FULL:
			nb := make([]byte, max64(2*int64(len(b.buf)), b.used+int64(need)))
			copy(nb, b.buf[:b.used])
			b.buf = nb
			pending = 1
		default:
			return false, s.err(rc)
		}
	}
	return false, nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
