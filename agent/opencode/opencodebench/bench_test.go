package opencodebench

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

// TestGenerate builds a small database and checks its shape and its names.
func TestGenerate(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "oc.db")
	st, err := Generate(ctx, p, 600)
	require.NoError(t, err)
	assert.Equal(t, Stats{Sessions: 3, Messages: 100, Parts: 600, Events: 600, Legacy: 90, Bytes: st.Bytes}, st)
	s, err := sqlite.Detect(ctx, p, all.SQLiteOptions(sqlite.Options{}))
	require.NoError(t, err)
	snap, err := s.Scan(ctx, store.ScanOptions{})
	require.NoError(t, err)
	assert.Equal(t, "opencode", s.Profile().Name)
	assert.Empty(t, snap.Problems)
	assert.Len(t, snap.Sites, 300+600+2*3, "tool parts, their events, the sessions' rules")
	assert.Len(t, edits(snap), st.Legacy)
	check, err := sqlite.IntegrityCheck(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, "ok", check)
	_, err = Generate(ctx, p, 10)
	assert.Error(t, err, "an existing file is never overwritten")
}

func edits(snap *store.Snapshot) []store.Edit {
	var out []store.Edit
	for _, s := range snap.Sites {
		if !s.ReadOnly && !mcpname.IsProviderSafe(s.Name) {
			out = append(out, store.Edit{Site: s, New: mcpname.Normalize(s.Name)})
		}
	}
	return out
}

var (
	benchOnce sync.Once
	benchDB   string
	benchDir  string
	benchErr  error
)

// benchParts is the size of the benchmark database: SESSIONFIX_BENCH_PARTS, default one million.
func benchParts() int {
	if n, err := strconv.Atoi(os.Getenv("SESSIONFIX_BENCH_PARTS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// database generates the benchmark database once per process.
func database(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "sessionfix-sqlitebench-")
		if benchErr != nil {
			return
		}
		benchDB = filepath.Join(benchDir, "opencode.db")
		var st Stats
		st, benchErr = Generate(context.Background(), benchDB, benchParts())
		b.Logf("generated %+v", st)
	})
	require.NoError(b, benchErr)
	return benchDB
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// BenchmarkScan1M scans an opencode database of a million parts (and as many part events);
// rows/s counts every row read.
func BenchmarkScan1M(b *testing.B) {
	p := database(b)
	ctx := context.Background()
	var rows int64
	b.ResetTimer()
	for b.Loop() {
		st, err := sqlite.Detect(ctx, p, all.SQLiteOptions(sqlite.Options{}))
		require.NoError(b, err)
		snap, err := st.Scan(ctx, store.ScanOptions{})
		require.NoError(b, err)
		rows += snap.Records
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkScanBatches1M is BenchmarkScan1M the way fix and scan read a large store: sites
// handed out batch by batch (store.BatchScanner), none held; sites/s counts them.
func BenchmarkScanBatches1M(b *testing.B) {
	p := database(b)
	ctx := context.Background()
	var sites int64
	b.ResetTimer()
	for b.Loop() {
		st := sqlite.Open(p, all.SQLiteOptions(sqlite.Options{}))
		_, err := st.ScanBatches(ctx, store.ScanOptions{}, func(_ *store.Snapshot, s []store.Site) error {
			sites += int64(len(s))
			return nil
		})
		require.NoError(b, err)
	}
	b.ReportMetric(float64(sites)/b.Elapsed().Seconds(), "sites/s")
}

// BenchmarkApply1M rewrites the legacy names of that database (one tool part in ten, and its
// events): backup, re-read and update of every changed row, integrity_check, commit. rows/s
// counts the rows rewritten; the scan before it is not timed.
func BenchmarkApply1M(b *testing.B) {
	src := database(b)
	ctx := context.Background()
	var rows int64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		p := filepath.Join(benchDir, "apply.db")
		require.NoError(b, copyFile(src, p))
		st, err := sqlite.Detect(ctx, p, all.SQLiteOptions(sqlite.Options{}))
		require.NoError(b, err)
		snap, err := st.Scan(ctx, store.ScanOptions{})
		require.NoError(b, err)
		es := edits(snap)
		bk := filepath.Join(benchDir, "backup"+strconv.Itoa(i))
		b.StartTimer()
		ch, err := st.Apply(ctx, snap, es, store.ApplyOptions{BackupPath: bk})
		require.NoError(b, err)
		b.StopTimer()
		rows += int64(len(es))
		os.Remove(bk)
		os.Remove(bk + ".rows.jsonl")
		os.Remove(p)
		_ = ch
		b.StartTimer()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
