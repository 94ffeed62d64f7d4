package postgres

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestVerifyHalvesNewestFirst: verify counts the pages of the batches written last first, in
// both halves at once (the batches dealt to the halves in turn from the last back), each
// batch's runs in one half and in page order, each run with its batch's index and xid.
func TestVerifyHalvesNewestFirst(t *testing.T) {
	var marks []*batchMark
	for i := range 5 {
		marks = append(marks, &batchMark{seq: i, xid: int64(100 + i), pages: [][2]int64{{int64(10 * i), int64(10*i + 1)}, {int64(10*i + 5), int64(10*i + 5)}}})
	}
	h := verifyHalves(marks)
	assert.Equal(t, []int32{4, 4, 2, 2, 0, 0}, h[0].idx)
	assert.Equal(t, []int32{3, 3, 1, 1}, h[1].idx)
	var lo, hi []uint32
	for i := range h[0].lo {
		lo, hi = append(lo, h[0].lo[i].BlockNumber), append(hi, h[0].hi[i].BlockNumber)
	}
	assert.Equal(t, []uint32{40, 45, 20, 25, 0, 5}, lo)
	assert.Equal(t, []uint32{42, 46, 22, 26, 2, 6}, hi, "the page after each run's last")
	assert.Equal(t, []string{"103", "103", "101", "101"}, h[1].xids)

	one := verifyHalves(marks[:1])
	assert.Equal(t, []int32{0, 0}, one[0].idx)
	assert.Empty(t, one[1].idx)
}
