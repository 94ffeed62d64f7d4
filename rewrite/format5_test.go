package rewrite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/store"
)

// A version 4 run (made by the 799c674 binary, the last before the compact sites of version
// 5: `fix --apply --yes --state-dir st root`) records each byte edit as a JSON object
// ("sites"). It is still listed and undone byte for byte, and a session the agent continued
// after that run is undone in place from those sites, the appended line kept.
func TestUndoOfAVersion4Run(t *testing.T) {
	for _, appended := range []bool{false, true} {
		t.Run(map[bool]string{false: "unchanged", true: "appended"}[appended], func(t *testing.T) {
			root, orig, runDir := goldenRunOf(t, "v4run-799c674")
			m, err := runlog.ReadRun(runDir)
			require.NoError(t, err)
			assert.Equal(t, 4, m.Version)
			require.Len(t, m.Files, 2)
			e, err := m.Entry(0)
			require.NoError(t, err)
			assert.NotEmpty(t, e.Sites, "version 4 records its sites as objects")
			assert.Empty(t, e.SiteData)
			runs, err := runlog.ListRuns(filepath.Dir(filepath.Dir(runDir)))
			require.NoError(t, err)
			require.Len(t, runs, 1)
			assert.Equal(t, 2, runs[0].Files)
			assert.Equal(t, 3, runs[0].Names)

			later := `{"uuid":"zz","type":"user","message":{"role":"user","parts":[{"text":"later"}]}}` + "\n"
			a := filepath.Join(root, "projects", "-p1", "chats", "a.jsonl")
			if appended {
				f, err := os.OpenFile(a, os.O_APPEND|os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = f.WriteString(later)
				require.NoError(t, err)
				require.NoError(t, f.Close())
			}
			outs, m2, err := undo(context.Background(), runDir, all.Open, false, time.Now)
			require.NoError(t, err)
			for _, o := range outs {
				assert.NoError(t, o.Err, o.Ref.Path)
			}
			assert.Equal(t, runlog.StateUndone, m2.State)
			if appended {
				want, _ := os.ReadFile(filepath.Join(orig, "projects", "-p1", "chats", "a.jsonl"))
				got, _ := os.ReadFile(a)
				assert.Equal(t, string(want)+later, string(got), "old names back in place, the appended line kept")
				require.NoError(t, os.WriteFile(a, want, 0o600))
			}
			sameTree(t, orig, root)
			m3, err := runlog.ReadRun(runDir) // the manifest undo wrote (this version's) reads back
			require.NoError(t, err)
			assert.Equal(t, runlog.ManifestVersion, m3.Version)
			assert.Equal(t, runlog.StateUndone, m3.State)
		})
	}
}

// Version 5 records a store's sites compactly: inline (site_data) for a few, in a file beside
// the backup for many; the journal and manifest hold no object per name, and undo reverses an
// appended-to session in place from either form. A site file that was edited refuses the
// in-place undo of its store (nothing replaced) and one outside the run's backups refuses the run.
func TestVersion5SitesInlineAndInAFile(t *testing.T) {
	for _, inFile := range []bool{false, true} {
		t.Run(map[bool]string{false: "inline", true: "file"}[inFile], func(t *testing.T) {
			if inFile {
				was := jsonl.InlineSites
				jsonl.InlineSites = 16
				defer func() { jsonl.InlineSites = was }()
			}
			dir := t.TempDir()
			var lines []string
			for i := range 40 {
				lines = append(lines, call(strings.Repeat("x", i%3+1), "mcp__a.b__c"+strings.Repeat("d", i%5)))
			}
			a := writeSession(t, dir, "a.jsonl", lines...)
			orig, _ := os.ReadFile(a)
			state := filepath.Join(t.TempDir(), "state")
			res, err := Apply(context.Background(), Build(scanned(t, a), naming.Policy{}), ApplyOptions{StateDir: state, Now: time.Now})
			require.NoError(t, err)
			for _, n := range []string{manifestName, journalName} {
				b, err := os.ReadFile(filepath.Join(res.Dir, n))
				require.NoError(t, err)
				assert.NotContains(t, string(b), `"sites"`, "%s holds no object per name", n)
				assert.NotContains(t, string(b), `\"mcp__a.b__c`, "%s holds no name token (only the renames' names)", n)
			}
			m, err := runlog.ReadRun(res.Dir)
			require.NoError(t, err)
			require.NoError(t, runlog.CheckRun(res.Dir, m))
			e, err := m.Entry(0)
			require.NoError(t, err)
			if inFile {
				require.NotNil(t, e.SiteFile)
				assert.Empty(t, e.SiteData)
				assert.Equal(t, int64(40), e.SiteFile.Count)
				assert.Equal(t, filepath.Join(res.Dir, backupsDir), filepath.Dir(e.SiteFile.Path))
			} else {
				assert.Nil(t, e.SiteFile)
				assert.NotEmpty(t, e.SiteData)
			}
			sites, err := e.AllSites()
			require.NoError(t, err)
			assert.Len(t, sites, 40)

			later := call("q", "mcp__a_b__c") + "\n"
			f, err := os.OpenFile(a, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString(later)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			rewritten, _ := os.ReadFile(a)

			if inFile {
				// One byte of the site file changed: the in-place undo is refused, nothing replaced.
				b, err := os.ReadFile(e.SiteFile.Path)
				require.NoError(t, err)
				good := append([]byte(nil), b...)
				b[len(b)-1] ^= 1
				require.NoError(t, os.WriteFile(e.SiteFile.Path, b, 0o600))
				outs, _, err := undo(context.Background(), res.Dir, all.Open, false, time.Now)
				require.NoError(t, err)
				require.Len(t, outs, 1)
				require.Error(t, outs[0].Err)
				got, _ := os.ReadFile(a)
				assert.Equal(t, rewritten, got, "nothing replaced")
				require.NoError(t, os.WriteFile(e.SiteFile.Path, good, 0o600))
			}
			outs, _, err := undo(context.Background(), res.Dir, all.Open, false, time.Now)
			require.NoError(t, err)
			require.Len(t, outs, 1)
			require.NoError(t, outs[0].Err)
			got, _ := os.ReadFile(a)
			assert.Equal(t, string(orig)+later, string(got))
		})
	}
}

// A Qwen session with more sites than BatchSites is planned and rewritten batch by batch
// (several results, the last with the outcome): the bytes written are those of a whole-store
// apply, the run's record is one entry with every site (in a file beside the backup), and undo
// restores byte for byte, also in place after the agent appended a line (issue 30, finding 7).
func TestLargeSessionIsProcessedInBatches(t *testing.T) {
	defer func(n int) { BatchSites = n }(BatchSites)
	BatchSites = 500
	was := jsonl.InlineSites
	jsonl.InlineSites = 256
	defer func() { jsonl.InlineSites = was }()
	dir := t.TempDir()
	var lines []string
	for i := range 1500 {
		lines = append(lines, call(fmt.Sprint(i), fmt.Sprintf("mcp__s%d.x__t", i%7)))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "b"), 0o755))
	a := writeSession(t, filepath.Join(dir, "a"), "s.jsonl", lines...)
	b := writeSession(t, filepath.Join(dir, "b"), "s.jsonl", lines...)
	orig, _ := os.ReadFile(a)
	_, err := Apply(context.Background(), Build(scanned(t, b), naming.Policy{}), ApplyOptions{StateDir: filepath.Join(t.TempDir(), "state"), Now: time.Now})
	require.NoError(t, err)
	want, _ := os.ReadFile(b)

	state := filepath.Join(t.TempDir(), "state")
	var got []*StoreResult
	res, err := Process(context.Background(), []store.Store{jsonl.Open(a, qwen.Session)}, naming.Policy{},
		ProcessOptions{Apply: true, ApplyOptions: ApplyOptions{StateDir: state, Now: time.Now}},
		func(r *StoreResult) error { got = append(got, r); return nil })
	require.NoError(t, err)
	require.Len(t, got, 2, "a batch of sites, then the store's closing result")
	require.NotNil(t, got[0].Batch, "planned in batches")
	last := got[len(got)-1]
	require.NotNil(t, last.Batch)
	assert.True(t, last.Batch.Last)
	require.NotNil(t, last.Outcome)
	require.NoError(t, last.Outcome.Err)
	assert.Equal(t, 1500, last.Outcome.Edits)
	now, _ := os.ReadFile(a)
	assert.Equal(t, string(want), string(now), "the bytes of a whole-store apply")

	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	require.Len(t, m.Files, 1)
	e, err := m.Entry(0)
	require.NoError(t, err)
	require.NotNil(t, e.SiteFile)
	assert.Equal(t, int64(1500), e.SiteFile.Count)
	later := call("z", "mcp__s1_x__t") + "\n"
	f, err := os.OpenFile(a, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(later)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	outs, _, err := undo(context.Background(), res.Dir, all.Open, false, time.Now)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	require.NoError(t, outs[0].Err)
	back, _ := os.ReadFile(a)
	assert.Equal(t, string(orig)+later, string(back))
}

// Crash points of a change whose sites go to a file: a failure to make the site file durable
// (its fsync) comes before the change is journaled, so the store is not replaced, no "commit"
// line names it and the site file is removed; a failure at the journal's "commit" line (after
// the site file is durable) also leaves the store as it was and removes the file.
func TestSiteFileCrashPoints(t *testing.T) {
	was := jsonl.InlineSites
	jsonl.InlineSites = 16
	defer func() { jsonl.InlineSites = was }()
	for _, at := range []string{"sites fsync", "commit line"} {
		t.Run(at, func(t *testing.T) {
			dir := t.TempDir()
			var lines []string
			for i := range 30 {
				lines = append(lines, call(fmt.Sprint(i), "mcp__a.b__c"))
			}
			a := writeSession(t, dir, "a.jsonl", lines...)
			orig, _ := os.ReadFile(a)
			state := filepath.Join(t.TempDir(), "state")
			var synced atomic.Bool // the hook runs in the apply's goroutines
			defer fileio.SetFaultHook(func(op, path string) error {
				switch {
				case at == "sites fsync" && op == fileio.FaultSync && strings.HasSuffix(path, ".sites"):
					return fmt.Errorf("injected: no space left on device")
				case op == fileio.FaultSync && strings.HasSuffix(path, ".sites"):
					synced.Store(true)
				case at == "commit line" && synced.Load() && op == fileio.FaultWrite && filepath.Base(path) == journalName:
					return fmt.Errorf("injected: no space left on device")
				}
				return nil
			})()
			res, err := Apply(context.Background(), Build(scanned(t, a), naming.Policy{}), ApplyOptions{StateDir: state, Now: time.Now})
			require.NoError(t, err)
			require.Len(t, res.Outcomes, 1)
			require.Error(t, res.Outcomes[0].Err)
			assert.Nil(t, res.Outcomes[0].Change)
			got, _ := os.ReadFile(a)
			assert.Equal(t, orig, got, "the store is not replaced")
			if res.Dir != "" {
				left, _ := filepath.Glob(filepath.Join(res.Dir, backupsDir, "*.sites"))
				assert.Empty(t, left, "the site file of a change not journaled is removed")
				j, _ := os.ReadFile(filepath.Join(res.Dir, journalName))
				assert.NotContains(t, string(j), `"event":"commit"`)
			}
		})
	}
}
