package pipeline

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/rewrite"
)

// fixSession is a session of fixtures/qwen-real/dot-qwen with names fix rewrites.
const fixSession = "projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl"

// recView is a FixView that records what Fix showed, in order.
type recView struct {
	calls   []string
	stores  map[FixPass]int
	pass    FixPass
	lastEnd FixPassEnd
}

func (v *recView) Begin(pass FixPass, stores int, reviewed bool) {
	v.pass = pass
	v.calls = append(v.calls, fmt.Sprintf("begin %d reviewed=%v", pass, reviewed))
}

func (v *recView) Store(r *rewrite.StoreResult) error {
	if v.stores == nil {
		v.stores = map[FixPass]int{}
	}
	v.stores[v.pass]++
	return nil
}

func (v *recView) End(pass FixPass, e FixPassEnd) error {
	v.calls = append(v.calls, fmt.Sprintf("end %d", pass))
	v.lastEnd = e
	return nil
}

func (v *recView) Abort(err error, e FixPassEnd) error {
	v.calls = append(v.calls, "abort")
	return err
}

func fixHome(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "dot-qwen")
	require.NoError(t, filepath.WalkDir("../fixtures/qwen-real/dot-qwen", func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel("../fixtures/qwen-real/dot-qwen", p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return os.WriteFile(filepath.Join(dir, rel), b, 0o640)
	}))
	return dir
}

func fixTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			out[p] = string(b)
		}
		return nil
	}))
	return out
}

func fixRequest(t *testing.T, dir string, apply, yes bool) FixRequest {
	home := t.TempDir()
	return FixRequest{Paths: []string{dir}, Apply: apply, Yes: yes, Options: Options{StateDir: filepath.Join(home, "state"), Prepared: &PrepareCache{}},
		Now: func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }}
}

func fixEnv(t *testing.T) Env {
	return Env{Getenv: func(string) string { return "" }, Home: t.TempDir()}
}

// Interactive fix --apply applies the plan the person confirmed: a session appended to while
// the question was open (a legacy name in the new line) is refused as changed since it was
// planned (exit 4) and left as it is, never planned again; the other stores are rewritten.
func TestFixAppliesTheConfirmedPlan(t *testing.T) {
	dir := fixHome(t)
	session := filepath.Join(dir, fixSession)
	line := `{"type":"assistant","message":{"role":"model","parts":[{"functionCall":{"name":"mcp__new.server__tool"}}]}}` + "\n"
	v := &recView{}
	asked := 0
	end, err := Fix(context.Background(), fixEnv(t), fixRequest(t, dir, true, false), FixHooks{View: v,
		Confirm: func(s *Summary) (bool, error) {
			asked++
			assert.Equal(t, 35, s.Report.Totals.Rewrite, "the plan shown")
			f, err := os.OpenFile(session, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.WriteString(line)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			return true, nil
		}})
	require.NoError(t, err)
	before := fixTree(t, filepath.Join("../fixtures/qwen-real/dot-qwen"))
	after := fixTree(t, dir)
	assert.True(t, before[filepath.Join("../fixtures/qwen-real/dot-qwen", fixSession)]+line == after[session], "the session changed after the question is not rewritten")
	assert.Equal(t, 1, asked)
	assert.Equal(t, []string{"begin 1 reviewed=false", "end 1", "begin 2 reviewed=true", "end 2"}, v.calls)
	assert.Equal(t, exitcode.InUse, end.Code)
	assert.False(t, end.Declined)
	require.Len(t, v.lastEnd.Skipped, 1)
	assert.Equal(t, session, v.lastEnd.Skipped[0].Path)
	assert.True(t, v.lastEnd.Skipped[0].InUse)
	assert.Equal(t, "rewrote 20 names in 2 files; 7 legacy truncated names kept; 1 file skipped (in use)", v.lastEnd.Line)
	assert.NotEmpty(t, v.lastEnd.Result.RunID)
}

// No at the question: nothing is written, the run ends declined (exit 6) after the review.
func TestFixDeclined(t *testing.T) {
	dir := fixHome(t)
	orig := fixTree(t, dir)
	v := &recView{}
	end, err := Fix(context.Background(), fixEnv(t), fixRequest(t, dir, true, false), FixHooks{View: v,
		Confirm: func(*Summary) (bool, error) { return false, nil }})
	require.NoError(t, err)
	assert.Equal(t, &FixEnd{Summary: end.Summary, Code: exitcode.Declined, Declined: true}, end)
	assert.Equal(t, []string{"begin 1 reviewed=false", "end 1"}, v.calls)
	assert.Equal(t, orig, fixTree(t, dir))
}

// A dry run writes nothing and hands the plan to WritePlan only with PlanOut; with Yes,
// --apply asks nothing and rewrites what it plans; an empty plan is not asked about.
func TestFixPasses(t *testing.T) {
	dir := fixHome(t)
	orig := fixTree(t, dir)
	v := &recView{}
	var names int
	req := fixRequest(t, dir, false, false)
	req.PlanOut = filepath.Join(t.TempDir(), "plan.json")
	end, err := Fix(context.Background(), fixEnv(t), req, FixHooks{View: v, WritePlan: func(pc *PlanCollector) error { names = pc.Names; return nil }})
	require.NoError(t, err)
	assert.Equal(t, 0, end.Code)
	assert.Equal(t, 35, names)
	assert.Equal(t, []string{"begin 0 reviewed=false", "end 0"}, v.calls)
	assert.Equal(t, orig, fixTree(t, dir))

	req.PlanOut = filepath.Join(dir, fixSession)
	_, err = Fix(context.Background(), fixEnv(t), req, FixHooks{View: &recView{}})
	assert.ErrorContains(t, err, "is a file this run reads")

	v = &recView{}
	end, err = Fix(context.Background(), fixEnv(t), fixRequest(t, dir, true, true), FixHooks{View: v,
		Confirm: func(*Summary) (bool, error) { t.Error("asked with Yes"); return false, nil }})
	require.NoError(t, err)
	assert.Equal(t, 0, end.Code)
	assert.Equal(t, []string{"begin 2 reviewed=false", "end 2"}, v.calls)
	assert.Equal(t, "rewrote 35 names in 3 files; 7 legacy truncated names kept", v.lastEnd.Line)
	assert.NotEqual(t, orig, fixTree(t, dir))

	v = &recView{}
	end, err = Fix(context.Background(), fixEnv(t), fixRequest(t, dir, true, false), FixHooks{View: v,
		Confirm: func(*Summary) (bool, error) { t.Error("asked about nothing"); return false, nil }})
	require.NoError(t, err)
	assert.Equal(t, 0, end.Code)
	assert.Equal(t, []string{"begin 1 reviewed=false", "end 1"}, v.calls)
}
