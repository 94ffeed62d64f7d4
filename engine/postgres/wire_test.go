package postgres

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/postgres/pgtest"
)

// TestWireArrays sends the writer's binary arrays to the server and reads its binary answers
// back: what the server decodes is what was encoded, byte for byte (an empty text, a quote, a
// brace, a NUL-free multi-byte text, a kilobyte), and a tid[] and int8 decode to their values.
func TestWireArrays(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, srv.WithPassword(srv.DB(t)))
	require.NoError(t, err)
	defer conn.Close(ctx)
	long := make([]byte, 1500)
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	texts := [][]byte{[]byte(""), []byte(`{"a": "b\"}`), []byte("é ∑ 🙂"), long, []byte("NULL")}
	tids := []pgtype.TID{{BlockNumber: 0, OffsetNumber: 1}, {BlockNumber: 4294967295, OffsetNumber: 65535}, {BlockNumber: 77, OffsetNumber: 3}}
	tidArr := binArray(oidTID, len(tids), 6*len(tids), func(b []byte, i int) []byte { return tidBytes(b, tids[i]) })
	oidArr := binArray(oidOID, 2, 8, func(b []byte, i int) []byte { return binary.BigEndian.AppendUint32(b, uint32(16384+i)) })

	rr := conn.PgConn().ExecParams(ctx, `SELECT (SELECT array_agg(md5(x) || ':' || octet_length(x) ORDER BY o) FROM unnest($1::text[]) WITH ORDINALITY AS u(x, o))::text,
 $2::tid[], $2::tid[]::text, $3::oid[]::text, $4::bigint * 2, cardinality($1::text[])`,
		[][]byte{textArray(texts), tidArr, oidArr, int8Bytes(-21)}, []uint32{oidTextArray, oidTIDArray, oidOIDArray, oidInt8}, binaryFormat,
		[]int16{0, 1, 0, 0, 1, 0})
	res := rr.Read()
	require.NoError(t, res.Err)
	require.Len(t, res.Rows, 1)
	row := res.Rows[0]
	want := "{"
	for i, x := range texts {
		if i > 0 {
			want += ","
		}
		want += md5Hex(x) + ":" + strconv.Itoa(len(x))
	}
	assert.Equal(t, want+"}", string(row[0]))
	got, err := readTIDArray(row[1])
	require.NoError(t, err)
	for i := range tids {
		tids[i].Valid = true
	}
	assert.Equal(t, tids, got)
	assert.Equal(t, `{"(0,1)","(4294967295,65535)","(77,3)"}`, string(row[2]))
	assert.Equal(t, "{16384,16385}", string(row[3]))
	n, err := readInt8(row[4])
	require.NoError(t, err)
	assert.Equal(t, int64(-42), n)
	assert.Equal(t, "5", string(row[5]))

	// An empty tid[] and a NULL one decode to no element.
	res = conn.PgConn().ExecParams(ctx, `SELECT '{}'::tid[], NULL::tid[]`, nil, nil, nil, binaryFormat).Read()
	require.NoError(t, res.Err)
	for _, v := range res.Rows[0] {
		got, err := readTIDArray(v)
		require.NoError(t, err)
		assert.Empty(t, got)
	}
	// A value of the wrong size is an error, never a guess.
	_, err = readTID([]byte{1, 2, 3})
	assert.ErrorIs(t, err, errWire)
	_, err = readInt8([]byte{1})
	assert.ErrorIs(t, err, errWire)
	_, err = readTIDArray([]byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 27, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 4, 1, 2, 3, 4})
	assert.ErrorIs(t, err, errWire)

	// nextResult says why a round trip ended early: the failing statement's error.
	b := &pgconn.Batch{}
	b.ExecParams("SELECT 1/0", nil, nil, nil, nil)
	b.ExecParams("SELECT 1", nil, nil, nil, nil)
	br := conn.PgConn().ExecBatch(ctx, b)
	_, err = nextResult(br)
	assert.ErrorContains(t, err, "division by zero")
	require.Error(t, br.Close())
}

// md5Hex is PostgreSQL's md5(text) of b.
func md5Hex(b []byte) string {
	h := md5.Sum(b)
	return hex.EncodeToString(h[:])
}
