package sqlite

/*
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include "sfcol.h"

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_context sqlite3_context;
typedef struct sqlite3_value sqlite3_value;
extern int sqlite3_create_function_v2(sqlite3*, const char*, int, int, void*,
	void (*)(sqlite3_context*, int, sqlite3_value**), void (*)(sqlite3_context*, int, sqlite3_value**),
	void (*)(sqlite3_context*), void (*)(void*));
extern int sqlite3_value_type(sqlite3_value*);
extern const unsigned char *sqlite3_value_text(sqlite3_value*);
extern int sqlite3_value_bytes(sqlite3_value*);
extern void sqlite3_result_null(sqlite3_context*);
extern void sqlite3_result_blob(sqlite3_context*, const void*, int, void(*)(void*));

#define SFX_MAXPATHS 8
#define SFX_MAXKEYS 16
#define SFX_MAXDEPTH 64

// One key-chain path ("$.part.tool"): its keys, how deep the value being read matches it
// (matched keys), and its result (the raw string token, or none).
typedef struct {
	int nkeys;
	const char *key[SFX_MAXKEYS];
	int klen[SFX_MAXKEYS];
	int matched;   // the depth of the object whose key is to match next; -1: decided
	int obj[SFX_MAXKEYS]; // per key: the object that held it (a second one there is ambiguous)
	const unsigned char *val;
	int64_t vlen;  // 0: no string at the path
} sfx_path;

typedef struct {
	const unsigned char *p, *end;
	sfx_path *paths;
	int npaths;
	int maxkeys; // the longest path's keys: objects deeper than that match no key
	int objs; // objects begun
} sfx;

static int sfx_ws(sfx *s) {
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) s->p++;
	return s->p < s->end;
}

// sfx_plain: bytes a string holds as they are (not '"', '\\' or a control byte); filled once
// by sfx_init from the package's init, before any connection or batch uses it (a lazy fill in
// sfx_register raced with other connections' registration and with sfx_batch on another thread).
static unsigned char sfx_plain[256];

static void sfx_init(void) {
	for (int c = 0; c < 256; c++) sfx_plain[c] = c >= 0x20 && c != '"' && c != '\\';
}

// sfx_string reads a string token (RFC 8259: no control bytes, known escapes, \u with four hex
// digits); esc tells whether it held a backslash.
static int sfx_string(sfx *s, int *esc) {
	*esc = 0;
	s->p++; // the opening quote
	while (s->p < s->end) {
		const unsigned char *p = s->p, *end = s->end;
#ifdef __SSE2__
		// 16 bytes at a time: stop at the first '"', '\\' or control byte (x <= 0x1f is
		// max(x, 0x1f) == 0x1f, unsigned); the loop never reads past end.
		{
			const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1f);
			while (end - p >= 16) {
				__m128i x = _mm_loadu_si128((const __m128i *)p);
				__m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
					_mm_cmpeq_epi8(_mm_max_epu8(x, ctl), ctl));
				int m = _mm_movemask_epi8(stop);
				if (m) { p += __builtin_ctz((unsigned)m); goto found; }
				p += 16;
			}
		}
#endif
		while (end - p >= 4 && sfx_plain[p[0]] && sfx_plain[p[1]] && sfx_plain[p[2]] && sfx_plain[p[3]]) p += 4;
		while (p < end && sfx_plain[*p]) p++;
#ifdef __SSE2__
	found:
#endif
		s->p = p;
		if (p >= end) return 0;
		unsigned char c = *s->p;
		if (c == '"') { s->p++; return 1; }
		if (c < 0x20) return 0;
		if (c == '\\') {
			*esc = 1;
			if (s->p + 1 >= s->end) return 0;
			unsigned char e = s->p[1];
			if (e == 'u') {
				if (s->end - s->p < 6) return 0;
				for (int k = 2; k < 6; k++) {
					unsigned char h = s->p[k];
					if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F'))) return 0;
				}
				s->p += 6;
				continue;
			}
			if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' && e != 't') return 0;
			s->p += 2;
			continue;
		}
		s->p++;
	}
	return 0;
}

static int sfx_digits(sfx *s) {
	const unsigned char *b = s->p;
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9') s->p++;
	return s->p > b;
}

static int sfx_number(sfx *s) {
	if (*s->p == '-') s->p++;
	if (s->p >= s->end) return 0;
	if (*s->p == '0') s->p++;
	else if (!sfx_digits(s)) return 0;
	if (s->p < s->end && *s->p == '.') { s->p++; if (!sfx_digits(s)) return 0; }
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-')) s->p++;
		if (!sfx_digits(s)) return 0;
	}
	return 1;
}

static int sfx_lit(sfx *s, const char *w, int n) {
	if (s->end - s->p < n || memcmp(s->p, w, n) != 0) return 0;
	s->p += n;
	return 1;
}

// sfx_value reads one value at nesting depth (0: the document). inpath: the paths whose keys
// the enclosing objects matched all the way (bit i: path i's value is this one).
static int sfx_value(sfx *s, int depth, unsigned hit);

static int sfx_object(sfx *s, int depth) {
	s->p++; // '{'
	int id = ++s->objs;
	if (!sfx_ws(s)) return 0;
	if (*s->p == '}') { s->p++; return 1; }
	for (;;) {
		if (*s->p != '"') return 0;
		const unsigned char *k = s->p + 1;
		int esc;
		if (!sfx_string(s, &esc)) return 0;
		int klen = (int)(s->p - 1 - k);
		if (esc) return 0; // an escaped key could spell a path's key: the lexer decides
		unsigned hit = 0, into = 0;
		for (int i = 0; depth < s->maxkeys && i < s->npaths; i++) {
			sfx_path *pt = &s->paths[i];
			if (depth >= pt->nkeys || pt->klen[depth] != klen || memcmp(pt->key[depth], k, klen) != 0) continue;
			if (pt->obj[depth] == id) return 0; // a duplicate key on the path: the lexer decides
			if (pt->matched != depth) continue;
			pt->obj[depth] = id;
			if (depth + 1 == pt->nkeys) { hit |= 1u << i; pt->matched = -1; }
			else { pt->matched = depth + 1; into |= 1u << i; }
		}
		if (!sfx_ws(s) || *s->p != ':') return 0;
		s->p++;
		if (!sfx_ws(s)) return 0;
		if (!sfx_value(s, depth + 1, hit)) return 0;
		for (int i = 0; into && i < s->npaths; i++) {
			if (into & (1u << i)) s->paths[i].matched = -1; // decided by the first such key
		}
		if (!sfx_ws(s)) return 0;
		if (*s->p == ',') { s->p++; if (!sfx_ws(s)) return 0; continue; }
		if (*s->p == '}') { s->p++; return 1; }
		return 0;
	}
}

static int sfx_array(sfx *s, int depth) {
	s->p++; // '['
	if (!sfx_ws(s)) return 0;
	if (*s->p == ']') { s->p++; return 1; }
	for (;;) {
		if (!sfx_value(s, depth + 1, 0)) return 0;
		if (!sfx_ws(s)) return 0;
		if (*s->p == ',') { s->p++; if (!sfx_ws(s)) return 0; continue; }
		if (*s->p == ']') { s->p++; return 1; }
		return 0;
	}
}

static int sfx_value(sfx *s, int depth, unsigned hit) {
	if (depth > SFX_MAXDEPTH || s->p >= s->end) return 0;
	unsigned char c = *s->p;
	const unsigned char *start = s->p;
	int esc;
	switch (c) {
	case '{': {
		// paths whose keys matched so far look into this object only when it is theirs
		if (!sfx_object(s, depth)) return 0;
		break;
	}
	case '[': if (!sfx_array(s, depth)) return 0; break;
	case '"':
		if (!sfx_string(s, &esc)) return 0;
		for (int i = 0; hit && i < s->npaths; i++) {
			if (hit & (1u << i)) { s->paths[i].val = start; s->paths[i].vlen = s->p - start; }
		}
		return 1;
	case 't': return sfx_lit(s, "true", 4);
	case 'f': return sfx_lit(s, "false", 5);
	case 'n': return sfx_lit(s, "null", 4);
	default:
		if (c == '-' || (c >= '0' && c <= '9')) return sfx_number(s);
		return 0;
	}
	return 1;
}

// sfx_parse_path reads one key-chain path ("$.a.b") of n bytes at t into pt (its keys point
// into t); 0 when it is not one.
static int sfx_parse_path(const char *t, int n, sfx_path *pt) {
	memset(pt, 0, sizeof *pt);
	if (t == 0 || n < 3 || t[0] != '$' || t[1] != '.') return 0;
	int at = 2;
	while (at < n) {
		int b = at;
		while (at < n && t[at] != '.') at++;
		if (at == b || pt->nkeys == SFX_MAXKEYS) return 0;
		pt->key[pt->nkeys] = t + b;
		pt->klen[pt->nkeys] = at - b;
		pt->nkeys++;
		if (at < n) at++;
	}
	return 1;
}

// sfx_doc checks the n bytes at v (one RFC 8259 object, see sessionfix_extract below) and
// finds the string token at each of the npaths parsed paths: 1 and, in out, per path the byte
// offset in v and the length of its token (0, 0: no string there); 0 when the value is not
// accepted. The paths' match state is reset first, so they serve one value after another.
static int sfx_doc(const unsigned char *v, int n, sfx_path *paths, int npaths, int64_t *out) {
	for (int i = 0; i < npaths; i++) {
		sfx_path *pt = &paths[i];
		pt->matched = 0;
		memset(pt->obj, 0, sizeof pt->obj);
		pt->val = 0;
		pt->vlen = 0;
	}
	int maxkeys = 0;
	for (int i = 0; i < npaths; i++) {
		if (paths[i].nkeys > maxkeys) maxkeys = paths[i].nkeys;
	}
	sfx s = { v, v + n, paths, npaths, maxkeys, 0 };
	if (v == 0 || !sfx_ws(&s) || *s.p != '{' || !sfx_value(&s, 0, 0)) return 0;
	if (sfx_ws(&s)) return 0; // something after the object
	for (int i = 0; i < npaths; i++) {
		out[2 * i] = paths[i].vlen ? (int64_t)(paths[i].val - v) : 0;
		out[2 * i + 1] = paths[i].vlen;
	}
	return 1;
}

// sessionfix_extract(value, path, …): NULL unless value is TEXT holding one RFC 8259 JSON
// object with no escaped key, no key of a path twice in one object, nesting at most
// SFX_MAXDEPTH; else a BLOB with, per key-chain path, the byte offset in value and the length
// of the string token found there as written (two int64s; 0, 0 when there is no string).
// The scan calls the same parser on whole row batches (sfx_batch); the SQL function stays as
// the fuzz target's bridge to SQLite's own JSON functions (extractfuzz_test.go).
static void sfx_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
	if (argc < 2 || argc - 1 > SFX_MAXPATHS || sqlite3_value_type(argv[0]) != 3) { sqlite3_result_null(ctx); return; }
	sfx_path paths[SFX_MAXPATHS];
	for (int i = 0; i < argc - 1; i++) {
		if (!sfx_parse_path((const char *)sqlite3_value_text(argv[i + 1]), sqlite3_value_bytes(argv[i + 1]), &paths[i])) {
			sqlite3_result_null(ctx);
			return;
		}
	}
	const unsigned char *v = sqlite3_value_text(argv[0]);
	int n = sqlite3_value_bytes(argv[0]);
	// per path: the byte offset and length of its string token (0, 0: none), little-endian
	// int64s as the machine stores them (the reader is the same process)
	int64_t out[2 * SFX_MAXPATHS];
	if (!sfx_doc(v, n, paths, argc - 1, out)) { sqlite3_result_null(ctx); return; }
	sqlite3_result_blob(ctx, out, (int)(sizeof(int64_t) * 2 * (argc - 1)), (void (*)(void *))(intptr_t)-1);
}

// sfx_batch runs the extractor on column valcol of nrows rows of a row batch (cols: width
// columns per row, as the row reader filled them; buf: their bytes), the npaths key-chain paths
// given back to back in ptext (plen[i] bytes each) parsed once for all rows. out: per row
// 1 + 2*npaths int64s: out[0] 1 when the value is TEXT that sessionfix_extract accepts, then
// the offsets and lengths it would return; out[0] 0 where it would return NULL. Returns 0, or
// -1 when a path is not a key chain (nothing written).
static int sfx_batch(const char *buf, const sf_col *cols, int width, int valcol, int nrows,
		const char *ptext, const int *plen, int npaths, int64_t *out) {
	if (npaths < 1 || npaths > SFX_MAXPATHS) return -1;
	sfx_path paths[SFX_MAXPATHS];
	for (int i = 0, at = 0; i < npaths; at += plen[i], i++) {
		if (!sfx_parse_path(ptext + at, plen[i], &paths[i])) return -1;
	}
	const int stride = 1 + 2 * npaths;
	for (int r = 0; r < nrows; r++) {
		const sf_col *c = cols + (long long)r * width + valcol;
		int64_t *o = out + (long long)r * stride;
		o[0] = 0;
		if (c->kind != 3 || c->n > 0x7fffffff) continue; // not TEXT (sfx_func: NULL)
		// an empty TEXT value has no bytes in buf: any non-NULL pointer will do (none is read)
		const unsigned char *v = (const unsigned char *)buf + c->off;
		o[0] = sfx_doc(v, (int)c->n, paths, npaths, o + 1);
	}
	return 0;
}

static int sfx_register(sqlite3 *db) {
	// SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, any number of arguments
	return sqlite3_create_function_v2(db, "sessionfix_extract", -1, 0x1 | 0x800 | 0x80000, 0, sfx_func, 0, 0, 0);
}
*/
import "C"

import (
	"fmt"
	"reflect"
	"unsafe"

	sqlite3 "github.com/mattn/go-sqlite3"
)

func init() { C.sfx_init() }

// extractFunc is the SQL function registerExtract adds to a read connection (see sfx_func in
// the C above): for the SQL-assisted path (fast.go) it checks a value and reads the strings at
// its key-chain paths in one pass without building SQLite's JSONB (json_valid + json_extract
// spent most of the scan's SQLite time there). It accepts a subset of what json_valid accepts
// (one object, no escaped key, at most 64 levels); every other value gets NULL and goes to the
// full lexer, as an invalid one always did.
const extractFunc = "sessionfix_extract"

// registerExtract adds extractFunc to the driver connection c.
func registerExtract(c *sqlite3.SQLiteConn) error {
	f := reflect.ValueOf(c).Elem().FieldByName("db")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() {
		return fmt.Errorf("the SQLite driver connection has no open handle (driver version not supported)")
	}
	if rc := C.sfx_register((*C.sqlite3)(f.UnsafePointer())); rc != 0 {
		return fmt.Errorf("register %s: SQLite error %d", extractFunc, int(rc))
	}
	return nil
}

// extractChunk is the rows of one sfx_batch call (one cgo crossing per that many rows).
const extractChunk = 256

// extractRows runs the extractor (sfx_batch, the parser of sessionfix_extract) on the value
// column (column 1) of b's rows into b.ext: per row 1 + 2*f.npaths int64s (accepted, then an
// offset and a length per path: see sfx_batch). It runs in the scan's own stage between the
// row reader and the site goroutine (scanTable), not inside sqlite3_step.
func extractRows(b *rowBatch, f *fastSpec) error {
	stride := 1 + 2*f.npaths
	if need := b.n * stride; cap(b.ext) < need {
		b.ext = make([]int64, need)
	} else {
		b.ext = b.ext[:need]
	}
	for first := 0; first < b.n; first += extractChunk {
		n := min(extractChunk, b.n-first)
		rc := C.sfx_batch((*C.char)(unsafe.Pointer(&b.buf[0])), &b.cols[first*b.width], C.int(b.width), 1, C.int(n),
			(*C.char)(unsafe.Pointer(&f.ptext[0])), &f.plen[0], C.int(len(f.plen)), (*C.int64_t)(unsafe.Pointer(&b.ext[first*stride])))
		if rc != 0 {
			return fmt.Errorf("%s: paths %q are not key chains", extractFunc, f.ptext)
		}
	}
	return nil
}
