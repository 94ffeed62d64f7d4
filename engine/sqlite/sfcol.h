// sf_col is one column of one row read by the row reader (rows.go): its storage class (1
// integer, 2 float, 3 text, 4 blob, 5 NULL: SQLite's codes), the number, or the bytes at
// buf[off:off+n]. Shared by rows.go (which fills it) and extract.go (which parses the TEXT of
// a batch's rows).
#ifndef SESSIONFIX_SFCOL_H
#define SESSIONFIX_SFCOL_H
typedef struct {
	long long i;
	double f;
	long long off;
	long long n;
	int kind;
} sf_col;
#endif
