package jsonl_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"

	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

func writeFile(t testing.TB, dir, name string, content []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, content, 0o640))
	old := time.Date(2026, 5, 1, 9, 0, 0, 123456789, time.UTC)
	require.NoError(t, os.Chtimes(p, old, old))
	return p
}

// normalizeAll rewrites every dotted MCP site the way the plan's default rule does.
func normalizeAll(snap *store.Snapshot) []store.Edit {
	var edits []store.Edit
	for _, s := range snap.Sites {
		if n := mcpname.NormalizeMcp(s.Name); n != s.Name && s.Units == nil {
			edits = append(edits, store.Edit{Site: s, New: n})
		} else if s.Units != nil && mcpname.HasPrefixUnits(s.Units) {
			edits = append(edits, store.Edit{Site: s, New: mcpname.NormalizeMcpUnits(s.Units)})
		}
	}
	return edits
}

func scanFile(t testing.TB, path string, p *jsonl.Profile) *store.Snapshot {
	t.Helper()
	snap, err := jsonl.Open(path, p).Scan(context.Background(), store.ScanOptions{Hash: true})
	require.NoError(t, err)
	return snap
}

func apply(t testing.TB, path string, p *jsonl.Profile, snap *store.Snapshot, edits []store.Edit) (*store.Change, error) {
	t.Helper()
	bk := filepath.Join(t.TempDir(), "backup")
	return jsonl.Open(path, p).Apply(context.Background(), snap, edits, store.ApplyOptions{BackupPath: bk})
}

func call(id, name string) string {
	return `{"uuid":"u-` + id + `","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"` + id + `","name":"` + name + `","args":{"q":"<x> & y"}}}]}}`
}

func resp(id, name string) string {
	return `{"uuid":"r-` + id + `","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"` + id + `","name":"` + name + `","response":{"output":"ok"}}}]},"toolCallResult":{"callId":"` + id + `"}}`
}

func TestByteExactRewrite(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		want   string
		sites  int
		probs  int
		notW   bool
		expErr bool
	}{
		{
			name:  "LF",
			input: call("c1", "mcp__lit__literature.search_pubmed") + "\n" + resp("c1", "mcp__lit__literature.search_pubmed") + "\n",
			want:  call("c1", "mcp__lit__literature_search_pubmed_1nv53db") + "\n" + resp("c1", "mcp__lit__literature_search_pubmed_1nv53db") + "\n",
			sites: 2,
		},
		{
			name:  "CRLF and no final newline",
			input: call("c1", "mcp__foo.bar__deploy.prod") + "\r\n" + resp("c1", "mcp__foo.bar__deploy.prod"),
			want:  call("c1", "mcp__foo_bar__deploy_prod_0tgvvnc") + "\r\n" + resp("c1", "mcp__foo_bar__deploy_prod_0tgvvnc"),
			sites: 2,
		},
		{
			name:  "BOM kept",
			input: "\xEF\xBB\xBF" + call("c1", "mcp__foo.bar__deploy.prod") + "\n",
			want:  "\xEF\xBB\xBF" + call("c1", "mcp__foo_bar__deploy_prod_0tgvvnc") + "\n",
			sites: 1,
		},
		{
			name:  "escaped dot is a dotted name; other escapes kept",
			input: `{"message":{"parts":[{"functionCall":{"name":"mcp__lit__literature\u002esearch_pubmed","args":{"t":"\u003cb\u003e \/ é \u00e9"}}}]},"n":1.50e+3}` + "\n",
			want:  `{"message":{"parts":[{"functionCall":{"name":"mcp__lit__literature_search_pubmed_1nv53db","args":{"t":"\u003cb\u003e \/ é \u00e9"}}}]},"n":1.50e+3}` + "\n",
			sites: 1,
		},
		{
			name:  "non-ASCII raw and escaped",
			input: call("a", "mcp__lit__搜索文献") + "\n" + call("b", `mcp__lit__\u641c\u7d22\u6587\u732e`) + "\n",
			want:  call("a", "mcp__lit_______0s19gpv") + "\n" + call("b", "mcp__lit_______0s19gpv") + "\n",
			sites: 2,
		},
		{
			name:  "invalid JSON lines left byte for byte",
			input: call("c1", "mcp__a.b__c") + "\n" + `{"message":{"parts":[{"functionCall":{"name":"mcp__a.b__c` + "\n" + "<<<<<<< HEAD\n" + call("c2", "mcp__a.b__c") + "\n",
			want:  call("c1", "mcp__a_b__c_"+mcpname.Hash("mcp__a.b__c")) + "\n" + `{"message":{"parts":[{"functionCall":{"name":"mcp__a.b__c` + "\n" + "<<<<<<< HEAD\n" + call("c2", "mcp__a_b__c_"+mcpname.Hash("mcp__a.b__c")) + "\n",
			sites: 2, probs: 2,
		},
		{
			name:  "key order, spacing and numbers untouched",
			input: `{ "z" : 1 , "message" : { "parts" : [ { "functionCall" : { "name" : "mcp__x.y__z" } } ] } , "a" : -0.0 }` + "\n",
			want:  `{ "z" : 1 , "message" : { "parts" : [ { "functionCall" : { "name" : "mcp__x_y__z_` + mcpname.Hash("mcp__x.y__z") + `" } } ] } , "a" : -0.0 }` + "\n",
			sites: 1,
		},
		{
			name:  "invalid UTF-8 is reported and the file is not written",
			input: call("c1", "mcp__a.b__c") + "\n" + `{"x":"` + "\xff" + `"}` + "\n",
			sites: 1, probs: 1, notW: true, expErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl", []byte(tt.input))
			fi, _ := os.Stat(p)
			snap := scanFile(t, p, qwen.Session)
			assert.Len(t, snap.Sites, tt.sites)
			assert.Len(t, snap.Problems, tt.probs, "%v", snap.Problems)
			assert.Equal(t, tt.notW, snap.NotWritable != "")
			ch, err := apply(t, p, qwen.Session, snap, normalizeAll(snap))
			got, _ := os.ReadFile(p)
			if tt.expErr {
				require.ErrorIs(t, err, store.ErrNotWritable)
				assert.Equal(t, tt.input, string(got), "a refused file is untouched")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			after, _ := os.Stat(p)
			assert.Equal(t, fi.ModTime(), after.ModTime(), "mtime kept to the nanosecond")
			assert.Equal(t, fi.Mode(), after.Mode(), "mode kept")
			sum := xxh3.Hash128(got).Bytes() // the "after" checksum since manifest version 3
			assert.Equal(t, "xxh3-128:"+hex.EncodeToString(sum[:]), ch.After.Fingerprint)
			bk, _ := os.ReadFile(ch.Backup)
			assert.Equal(t, tt.input, string(bk), "backup is the original")
		})
	}
}

func TestSitesOfEveryKind(t *testing.T) {
	lines := []string{
		// bridge: a deferred MCP tool called through tool_call (Qwen Code 0.2x), args before name
		`{"message":{"parts":[{"functionCall":{"args":{"name":"mcp__foo.bar__get_data","arguments":{}},"id":"b1","name":"tool_call"}}]}}`,
		// args.name of a non-bridge call is an argument, not a site
		`{"message":{"parts":[{"functionCall":{"id":"c2","name":"mcp__x__search","args":{"name":"mcp__not.a__site"}}}]}}`,
		`{"type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"function_name":"mcp__foo.bar__get_data","mcp_server_name":"foo.bar","call_id":"b1"}}}`,
		`{"type":"system","subtype":"chat_compression","systemPayload":{"compressedHistory":[{"role":"model","parts":[{"functionCall":{"id":"k1","name":"mcp__a.b__c"}}]},{"role":"user","parts":[{"functionResponse":{"id":"k1","name":"mcp__a.b__c"}}]}]}}`,
		`{"type":"system","subtype":"agent_bootstrap","systemPayload":{"history":[{"role":"model","parts":[{"functionCall":{"id":"h1","name":"tool_call","args":{"name":"mcp__d.e__f"}}}]}]}}`,
	}
	p := writeFile(t, t.TempDir(), "s.jsonl", []byte(strings.Join(lines, "\n")+"\n"))
	snap := scanFile(t, p, qwen.Session)
	type got struct {
		Line         int64
		Kind, Field  string
		Name, CallID string
		Server       string
	}
	var sites []got
	for _, s := range snap.Sites {
		sites = append(sites, got{s.Loc.Line, string(s.Kind), s.Field, s.Name, s.CallID, s.Server})
	}
	assert.Equal(t, []got{
		{1, "call", "", "tool_call", "b1", ""},
		{1, "bridge", "", "mcp__foo.bar__get_data", "b1", ""},
		{2, "call", "", "mcp__x__search", "c2", ""},
		{3, "telemetry", "", "mcp__foo.bar__get_data", "b1", "foo.bar"},
		{4, "compressed", "call", "mcp__a.b__c", "k1", ""},
		{4, "compressed", "response", "mcp__a.b__c", "k1", ""},
		{5, "bootstrap", "call", "tool_call", "h1", ""},
		{5, "bootstrap", "bridge", "mcp__d.e__f", "h1", ""},
	}, sites)
}

func TestUsageKeysAndCheckpoints(t *testing.T) {
	dir := t.TempDir()
	u := writeFile(t, dir, "usage_record.jsonl", []byte(`{"tools":{"totalCalls":2,"byName":{"mcp__lit__literature.search_pubmed":{"count":1},"read_file":{"count":1}}}}`+"\n"))
	snap := scanFile(t, u, qwenDetect(u, nil))
	require.Len(t, snap.Sites, 2)
	assert.True(t, snap.Sites[0].Key)
	assert.Equal(t, "line 1 tools.byName", snap.Sites[0].Scope)
	_, err := apply(t, u, qwen.Usage, snap, normalizeAll(snap))
	require.NoError(t, err)
	b, _ := os.ReadFile(u)
	assert.Equal(t, `{"tools":{"totalCalls":2,"byName":{"mcp__lit__literature_search_pubmed_1nv53db":{"count":1},"read_file":{"count":1}}}}`+"\n", string(b))

	ck := writeFile(t, dir, "tmp/abc/checkpoint-my%20tag.json", []byte("[\n  {\"role\": \"model\", \"parts\": [{\"functionCall\": {\"id\": \"c\", \"name\": \"mcp__z.db__q\"}}]}\n]\n"))
	require.Equal(t, qwen.Checkpoint, qwenDetect(ck, nil))
	snap = scanFile(t, ck, qwen.Checkpoint)
	require.Len(t, snap.Sites, 1)
	assert.Equal(t, int64(2), snap.Sites[0].Loc.Line)

	ed := writeFile(t, dir, "tmp/abc/checkpoints/2026-x-edit.json", []byte(`{"history":[],"clientHistory":[{"role":"model","parts":[{"functionCall":{"name":"mcp__a.b__c"}}]}],"toolCall":{"name":"edit","args":{}}}`))
	require.Equal(t, qwen.EditCheckpoint, qwenDetect(ed, nil))
	snap = scanFile(t, ed, qwen.EditCheckpoint)
	assert.Len(t, snap.Sites, 2)
}

func TestApplyRefusesChangedFile(t *testing.T) {
	in := call("c1", "mcp__a.b__c") + "\n"
	p := writeFile(t, t.TempDir(), "s.jsonl", []byte(in))
	snap := scanFile(t, p, qwen.Session)

	// Appended after the scan: refused, nothing lost.
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(call("c2", "mcp__new.line__x") + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = apply(t, p, qwen.Session, snap, normalizeAll(snap))
	require.ErrorIs(t, err, store.ErrInUse)
	got, _ := os.ReadFile(p)
	assert.Equal(t, in+call("c2", "mcp__new.line__x")+"\n", string(got))
	assertNoTemp(t, filepath.Dir(p))
}

func TestApplyRefusesAppendDuringRewrite(t *testing.T) {
	in := call("c1", "mcp__a.b__c") + "\n"
	p := writeFile(t, t.TempDir(), "s.jsonl", []byte(in))
	snap := scanFile(t, p, qwen.Session)
	extra := call("c2", "mcp__late__x") + "\n"
	bk := filepath.Join(t.TempDir(), "backup")
	ctx := fileio.WithBeforeCheck(context.Background(), func(string) {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, _ = f.WriteString(extra)
		f.Close()
	})
	_, err := jsonl.Open(p, qwen.Session).Apply(ctx, snap, normalizeAll(snap), store.ApplyOptions{BackupPath: bk})
	var iu *store.InUseError
	require.ErrorAs(t, err, &iu)
	assert.Contains(t, iu.Reason, "appended to while rewriting")
	got, _ := os.ReadFile(p)
	assert.Equal(t, in+extra, string(got), "the appended line is still there")
	assertNoTemp(t, filepath.Dir(p))
	_, err = os.Stat(bk)
	assert.ErrorIs(t, err, os.ErrNotExist, "no backup is left for a refused file")
}

func TestRestore(t *testing.T) {
	in := call("c1", "mcp__a.b__c") + "\n"
	p := writeFile(t, t.TempDir(), "s.jsonl", []byte(in))
	fi0, _ := os.Stat(p)
	snap := scanFile(t, p, qwen.Session)
	ch, err := apply(t, p, qwen.Session, snap, normalizeAll(snap))
	require.NoError(t, err)
	st := jsonl.Open(p, qwen.Session)

	// Changed since the run (not only appended to): refused without force.
	rewritten, _ := os.ReadFile(p)
	require.NoError(t, os.WriteFile(p, append([]byte("{}\n"), rewritten...), 0o640))
	err = st.Restore(context.Background(), ch, false)
	require.ErrorIs(t, err, store.ErrChangedSinceRun)
	require.NoError(t, st.Restore(context.Background(), ch, true))
	got, _ := os.ReadFile(p)
	assert.Equal(t, in, string(got))
	fi, _ := os.Stat(p)
	assert.Equal(t, fi0.ModTime(), fi.ModTime())
	assert.Equal(t, fi0.Mode(), fi.Mode())

	// A damaged backup is never restored.
	require.NoError(t, os.WriteFile(ch.Backup, []byte("x"), 0o600))
	err = st.Restore(context.Background(), ch, true)
	assert.ErrorContains(t, err, "damaged")
}

func TestLongLineStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 200 MB file")
	}
	// A 200 MB line (a huge tool output) with a dotted name after it: scanned and rewritten
	// with flat memory (no line buffer), every other byte identical.
	dir := t.TempDir()
	p := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(p)
	require.NoError(t, err)
	head := `{"message":{"parts":[{"functionResponse":{"id":"c1","response":{"output":"`
	_, _ = f.WriteString(head)
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	for i := 0; i < 200; i++ {
		_, err = f.Write(chunk)
		require.NoError(t, err)
	}
	tail := `"},"name":"mcp__big.srv__dump"}}]}}` + "\n"
	_, _ = f.WriteString(tail)
	require.NoError(t, f.Close())
	snap := scanFile(t, p, qwen.Session)
	require.Len(t, snap.Sites, 1)
	assert.Empty(t, snap.Problems)
	_, err = apply(t, p, qwen.Session, snap, normalizeAll(snap))
	require.NoError(t, err)
	fi, _ := os.Stat(p)
	want := mcpname.Normalize("mcp__big.srv__dump")
	assert.Equal(t, int64(len(head)+200<<20+len(tail)-len("mcp__big.srv__dump")+len(want)), fi.Size())
	g, _ := os.Open(p)
	defer g.Close()
	buf := make([]byte, len(tail)+64)
	_, _ = g.ReadAt(buf[:len(tail)-len("mcp__big.srv__dump")+len(want)], fi.Size()-int64(len(tail)-len("mcp__big.srv__dump")+len(want)))
	assert.Equal(t, strings.Replace(tail, "mcp__big.srv__dump", want, 1), string(buf[:len(tail)-len("mcp__big.srv__dump")+len(want)]))
}

func assertNoTemp(t testing.TB, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		assert.False(t, strings.HasPrefix(e.Name(), "."), "temp file left behind: %s", e.Name())
	}
}

func TestApplyRefusesSameSizeChangeSinceScan(t *testing.T) {
	in := call("c1", "mcp__a.b__c") + "\n" + `{"x":"aaaa"}` + "\n"
	p := writeFile(t, t.TempDir(), "s.jsonl", []byte(in))
	snap := scanFile(t, p, qwen.Session)
	require.NotEmpty(t, snap.State.Fingerprint)
	// Same size, mtime put back: only the content fingerprint tells.
	changed := strings.Replace(in, "aaaa", "bbbb", 1)
	require.NoError(t, os.WriteFile(p, []byte(changed), 0o640))
	require.NoError(t, os.Chtimes(p, snap.State.ModTime, snap.State.ModTime))
	_, err := apply(t, p, qwen.Session, snap, normalizeAll(snap))
	var iu *store.InUseError
	require.ErrorAs(t, err, &iu)
	assert.Contains(t, iu.Reason, "content changed since it was scanned")
	got, _ := os.ReadFile(p)
	assert.Equal(t, changed, string(got))
}

// Issue 9 (undo as reverse edits): a session the agent continued after the fix is undone in
// place: the old names are back at the recorded sites and the appended turns are kept.
func TestRestoreReversesEditsAndKeepsAppendedLines(t *testing.T) {
	in := call("c1", "mcp__a.b__c") + "\n" + call("c2", "mcp__x.y__z") + "\n"
	p := writeFile(t, t.TempDir(), "s.jsonl", []byte(in))
	snap := scanFile(t, p, qwen.Session)
	ch, err := apply(t, p, qwen.Session, snap, normalizeAll(snap))
	require.NoError(t, err)
	sites, err := ch.AllSites()
	require.NoError(t, err)
	require.Len(t, sites, len(normalizeAll(snap)), "every edit is recorded with its site")
	assert.Empty(t, ch.Sites, "recorded compactly (site_data), not as an object per name")
	rewritten, _ := os.ReadFile(p)
	later := call("c3", "mcp__a_b__c") + "\n"
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(later)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	require.NoError(t, jsonl.Open(p, qwen.Session).Restore(context.Background(), ch, false))
	got, _ := os.ReadFile(p)
	assert.Equal(t, in+later, string(got), "old names back, the appended line kept")
	assert.NotEqual(t, string(rewritten), in)
	assertNoTemp(t, filepath.Dir(p))
}

// TestSpliceMismatchIsErrTokenMismatch: a token that is not at its offset refuses the store as
// in use, and errors.Is finds store.ErrTokenMismatch behind it (it used to be formatted in with
// %v), with the line in the reason.
func TestSpliceMismatchIsErrTokenMismatch(t *testing.T) {
	src := "{\"a\":1}\n{\"name\":\"mcp__x__y\"}\n"
	edit := store.Edit{Site: store.Site{Loc: store.Loc{Line: 2, Offset: 16}, Raw: []byte(`"mcp__x__z"`)}, New: "mcp__x__w"}
	var out bytes.Buffer
	err := jsonl.Splice([]store.Edit{edit})(&out, strings.NewReader(src))
	require.ErrorIs(t, err, store.ErrInUse)
	require.ErrorIs(t, err, store.ErrTokenMismatch)
	assert.Equal(t, "store is in use by another process (line 2: name token not found at its offset (offset 16) (content changed since it was scanned))", err.Error())

	edit.Site.Raw = []byte(`"mcp__x__y"`)
	out.Reset()
	require.NoError(t, jsonl.Splice([]store.Edit{edit})(&out, strings.NewReader(src)))
	assert.Equal(t, "{\"a\":1}\n{\"name\":\"mcp__x__w\"}\n", out.String())
}

// qwenDetect is qwen.Detect without the sureness.
func qwenDetect(path string, first []byte) *jsonl.Profile {
	p, _ := qwen.Detect(path, first)
	return p
}

// Apply takes edits in any order (a plan's come in offset order: they are used as given;
// others are sorted into a copy): edits given last to first rewrite the same bytes and record
// the same sites as in offset order, and the caller's slice keeps its order.
func TestApplyEditsNotInOffsetOrder(t *testing.T) {
	in := call("c1", "mcp__a.b__c") + "\n" + resp("c1", "mcp__a.b__c") + "\n" + call("c2", "mcp__x.y__z") + "\n"
	dir := t.TempDir()
	pa := writeFile(t, dir, "a/s.jsonl", []byte(in))
	pb := writeFile(t, dir, "b/s.jsonl", []byte(in))
	sa := scanFile(t, pa, qwen.Session)
	inOrder := normalizeAll(sa)
	require.Len(t, inOrder, 3)
	cha, err := apply(t, pa, qwen.Session, sa, inOrder)
	require.NoError(t, err)

	sb := scanFile(t, pb, qwen.Session)
	rev := normalizeAll(sb)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	given := make([]int64, len(rev))
	for i, e := range rev {
		given[i] = e.Site.Loc.Offset
	}
	chb, err := apply(t, pb, qwen.Session, sb, rev)
	require.NoError(t, err)
	a, _ := os.ReadFile(pa)
	b, _ := os.ReadFile(pb)
	assert.Equal(t, string(a), string(b), "the same bytes whatever the order of the edits")
	assert.NotEqual(t, in, string(b))
	assert.Equal(t, cha.Sites, chb.Sites, "the same byte edits, in offset order")
	assert.Equal(t, 3, chb.Edits)
	for i, e := range rev {
		assert.Equal(t, given[i], e.Site.Loc.Offset, "the caller's edit %d stays where it was", i)
	}
}

// A Batched profile's ScanBatches hands out the sites Scan finds, in order, in batches that
// end at record ends (a record of several names is never split); ApplyBatches fed those
// batches writes the bytes Apply writes, and records the same sites (issue 30, finding 7).
func TestScanBatchesAndApplyBatchesAgreeWithScanAndApply(t *testing.T) {
	defer jsonl.SetBatchSites(jsonl.SetBatchSites(3))
	var lines []string
	for i := range 20 {
		// two names in a record: a call and its response in one line
		lines = append(lines, fmt.Sprintf(`{"type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"c%d","name":"mcp__a.b__c%d"}},{"functionResponse":{"id":"c%d","name":"mcp__a.b__c%d"}}]}}`, i, i%4, i, i%4))
	}
	in := []byte(strings.Join(lines, "\n") + "\n")
	dir := t.TempDir()
	p1 := writeFile(t, dir, "a.jsonl", in)
	p2 := writeFile(t, dir, "b.jsonl", in)
	whole := scanFile(t, p1, qwen.Session)
	require.Len(t, whole.Sites, 40)

	var batches [][]store.Site
	st := jsonl.Open(p2, qwen.Session)
	require.True(t, st.BatchScans())
	head, err := st.ScanBatches(context.Background(), store.ScanOptions{Hash: true}, func(_ *store.Snapshot, s []store.Site) error {
		batches = append(batches, s)
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, head.Sites)
	assert.Equal(t, whole.Records, head.Records)
	require.Greater(t, len(batches), 5)
	var all []store.Site
	for _, b := range batches {
		assert.Equal(t, 0, len(b)%2, "a record's two sites stay in one batch")
		all = append(all, b...)
	}
	assert.Equal(t, whole.Sites, all)

	ch1, err := apply(t, p1, qwen.Session, whole, normalizeAll(whole))
	require.NoError(t, err)
	k := 0
	head.Sites = all
	edits := normalizeAll(head)
	head.Sites = nil
	ch2, err := st.ApplyBatches(context.Background(), head, func() ([]store.Edit, error) {
		if k >= len(edits) {
			return nil, io.EOF
		}
		n := min(4, len(edits)-k)
		k += n
		return edits[k-n : k], nil
	}, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.NoError(t, err)
	b1, _ := os.ReadFile(p1)
	b2, _ := os.ReadFile(p2)
	assert.Equal(t, string(b1), string(b2))
	s1, err := ch1.AllSites()
	require.NoError(t, err)
	s2, err := ch2.AllSites()
	require.NoError(t, err)
	assert.Equal(t, s1, s2)
	assert.Len(t, s2, 40)
	assert.Equal(t, 40, ch2.Edits)
}

// TestTornDocumentIsAnError: a JSON Lines file with a bad line is read (the other records; a
// warning), but a one-document store that does not parse (a Qwen Code checkpoint cut short, as
// a Cline task or session, a Gemini CLI .json session could be) was not read at all: an
// error-level problem, so the run says it is incomplete (exit 3), and no site. Before, both
// were warnings and the run exited 0 with the document's names unseen.
func TestTornDocumentIsAnError(t *testing.T) {
	dir := t.TempDir()
	lines := writeFile(t, dir, "s.jsonl", []byte(call("c1", "mcp__a.b__c")+"\n"+`{"message":{"parts":[{"functionCall":{"name":"mcp__a.b__c`))
	snap := scanFile(t, lines, qwen.Session)
	require.Len(t, snap.Problems, 1)
	assert.Equal(t, store.SevWarning, snap.Problems[0].Severity)
	assert.False(t, snap.Failed())
	assert.Len(t, snap.Sites, 1, "the other line is read")

	doc := writeFile(t, dir, "checkpoint-x.json", []byte(`[{"role":"model","parts":[{"functionCall":{"name":"mcp__a.b__c"}}]},{"role":"user","parts":[`))
	snap = scanFile(t, doc, qwen.Checkpoint)
	require.Len(t, snap.Problems, 1)
	assert.Equal(t, store.SevError, snap.Problems[0].Severity)
	assert.True(t, snap.Failed())
	assert.Contains(t, snap.Problems[0].Reason, "invalid JSON (unexpected end of input")
	assert.Contains(t, snap.Problems[0].Reason, "the file could not be read, so none of its names were scanned")
	assert.Empty(t, snap.Sites)
}

// TestInvalidRecordClearsItsDroppedSites: the sites streamed from a record that turns out
// invalid are dropped and their slots cleared, so a Sites slice is zero past its length when
// it is given back (ReleaseSites clears only its length: freelist.List.PutUsed).
func TestInvalidRecordClearsItsDroppedSites(t *testing.T) {
	dir := t.TempDir()
	valid := `{"type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"mcp__a.b__c"}}]}}`
	invalid := `{"type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"c2","name":"mcp__d.e__f"}},{"functionCall":{"id":"c3","name":"mcp__g.h__i"}}]},}`
	p := writeFile(t, dir, "s.jsonl", []byte(valid+"\n"+invalid+"\n"))
	snap, err := jsonl.Open(p, qwen.Session).Scan(context.Background(), store.ScanOptions{})
	require.NoError(t, err)
	require.Len(t, snap.Sites, 1, "the valid record's name")
	require.Len(t, snap.Problems, 1, "the invalid record: %v", snap.Problems)
	require.Greater(t, cap(snap.Sites), 1, "the dropped site (its first part, streamed when the second began) was in this slice")
	for _, s := range snap.Sites[len(snap.Sites):cap(snap.Sites)] {
		assert.Equal(t, store.Site{}, s, "past the length every site is zero")
	}
}
