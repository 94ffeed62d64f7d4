package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// The writer's round trips go through pgx's protocol layer (pgconn.Batch of prepared statements,
// parameters and results in PostgreSQL's binary format, encoded and decoded here) rather than
// pgx's typed interface or database/sql with sqlx: a batch's parameters are arrays of hundreds of
// values of kilobytes each, which pgx's reflective array encoder built by growing its buffer
// value by value (at 100,000 rows of 1 KB it took 0.41 s of the client's 3.9 s CPU), and the
// locked rows are read without a value per column. The SQL is the same; only the encoding is
// ours. Formats: https://www.postgresql.org/docs/15/protocol-message-formats.html and the
// types' *_send/*_recv functions (array_send: ndim, has-null flag, element OID, then per
// dimension its length and lower bound, then each element as its length and bytes; int8 and
// oid big-endian; tid a 4-byte block number and a 2-byte offset).

// Type OIDs of the parameters the writer sends (pg_type.oid; fixed in every PostgreSQL).
const (
	oidInt8      = 20
	oidText      = 25
	oidOID       = 26
	oidTID       = 27
	oidTextArray = 1009
	oidTIDArray  = 1010
	oidOIDArray  = 1028
)

var binaryFormat = []int16{1}

// binArray is the binary encoding of a one-dimensional array of n elements of type elem with
// no NULL, whose element i is elemOf(i) (appended to the buffer it is given), in one buffer of
// size bytes (the total of the elements' lengths).
func binArray(elem uint32, n, size int, elemOf func(b []byte, i int) []byte) []byte {
	return binAppend(make([]byte, 0, 20+4*n+size), elem, n, size, elemOf)
}

// binAppend is binArray appended to b (grown once, to hold it whole).
func binAppend(b []byte, elem uint32, n, size int, elemOf func(b []byte, i int) []byte) []byte {
	b = slices.Grow(b, 20+4*n+size)
	b = binary.BigEndian.AppendUint32(b, 1) // ndim
	b = binary.BigEndian.AppendUint32(b, 0) // no NULL
	b = binary.BigEndian.AppendUint32(b, elem)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = binary.BigEndian.AppendUint32(b, 1) // lower bound
	for i := range n {
		at := len(b)
		b = append(b, 0, 0, 0, 0)
		b = elemOf(b, i)
		binary.BigEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	}
	return b
}

// textArray is binArray of texts.
func textArray[T ~string | ~[]byte](vals []T) []byte {
	size := 0
	for _, v := range vals {
		size += len(v)
	}
	return binArray(oidText, len(vals), size, func(b []byte, i int) []byte { return append(b, vals[i]...) })
}

func int8Bytes(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// errWire is a result the writer cannot read (a column of another length than its type's).
var errWire = errors.New("unexpected value in the server's answer")

func readInt8(v []byte) (int64, error) {
	if len(v) != 8 {
		return 0, errWire
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

func readInt4(v []byte) (int32, error) {
	if len(v) != 4 {
		return 0, errWire
	}
	return int32(binary.BigEndian.Uint32(v)), nil
}

// readXID decodes an xid (a transaction id: 4 bytes, unsigned; xidsend), as the int64 that
// xmin::text::bigint gives.
func readXID(v []byte) (int64, error) {
	if len(v) != 4 {
		return 0, errWire
	}
	return int64(binary.BigEndian.Uint32(v)), nil
}

func readTID(v []byte) (pgtype.TID, error) {
	if len(v) != 6 {
		return pgtype.TID{}, errWire
	}
	return pgtype.TID{BlockNumber: binary.BigEndian.Uint32(v), OffsetNumber: binary.BigEndian.Uint16(v[4:]), Valid: true}, nil
}

func tidBytes(b []byte, t pgtype.TID) []byte {
	b = binary.BigEndian.AppendUint32(b, t.BlockNumber)
	return binary.BigEndian.AppendUint16(b, t.OffsetNumber)
}

// readTIDArray decodes a tid[] in binary format (nil: SQL NULL, no element).
func readTIDArray(v []byte) ([]pgtype.TID, error) {
	if v == nil {
		return nil, nil
	}
	if len(v) < 12 {
		return nil, errWire
	}
	ndim := binary.BigEndian.Uint32(v)
	if ndim == 0 {
		return nil, nil
	}
	if ndim != 1 || len(v) < 20 {
		return nil, errWire
	}
	n := int(binary.BigEndian.Uint32(v[12:]))
	v = v[20:]
	out := make([]pgtype.TID, 0, n)
	for range n {
		if len(v) < 4 {
			return nil, errWire
		}
		l := int32(binary.BigEndian.Uint32(v))
		if l != 6 || len(v) < 10 {
			return nil, errWire
		}
		t, _ := readTID(v[4:10])
		out = append(out, t)
		v = v[10:]
	}
	return out, nil
}

// prepared returns the statement description of q on the writer's connection, preparing it (one
// round trip) the first time.
func (w *writer) prepared(ctx context.Context, q string, oids []uint32) (*pgconn.StatementDescription, error) {
	if sd := w.stmts[q]; sd != nil {
		return sd, nil
	}
	if w.stmts == nil {
		w.stmts = map[string]*pgconn.StatementDescription{}
	}
	sd, err := w.conn.PgConn().Prepare(ctx, fmt.Sprintf("sessionfix_%d", len(w.stmts)), q, oids)
	if err != nil {
		return nil, err
	}
	w.stmts[q] = sd
	return sd, nil
}

// nextResult is the next statement's result of mrr; when there is none, the error that ended
// the round trip (a statement failed: the server skipped the rest of it).
func nextResult(mrr *pgconn.MultiResultReader) (*pgconn.ResultReader, error) {
	if mrr.NextResult() {
		return mrr.ResultReader(), nil
	}
	if err := mrr.Close(); err != nil {
		return nil, err
	}
	return nil, errors.New("the server sent fewer results than statements")
}

// execResult reads the result of a statement without rows (BEGIN, COMMIT, ROLLBACK).
func execResult(mrr *pgconn.MultiResultReader) error {
	rr, err := nextResult(mrr)
	if err != nil {
		return err
	}
	_, err = rr.Close()
	return err
}
