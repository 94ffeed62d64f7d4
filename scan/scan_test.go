package scan

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/store"
)

const sessionLine = `{"uuid":"u","sessionId":"s","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"name":"mcp__a.b__c"}}]}}` + "\n"

func write(t testing.TB, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	sess := write(t, root, "projects/-home-a/chats/0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl", sessionLine)
	arch := write(t, root, "projects/-home-a/chats/archive/11111111-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl", sessionLine)
	usage := write(t, root, "usage_record.jsonl", `{"tools":{"byName":{}}}`+"\n")
	ck := write(t, root, "tmp/abc/checkpoint-tag.json", "[]")
	write(t, root, "tmp/abc/logs.json", "[]")
	write(t, root, "usage/token-usage-2026-11.jsonl", `{"sessionId":"s","model":"m"}`+"\n")
	write(t, root, "debug/x.jsonl", sessionLine) // skipped directory
	write(t, root, "projects/-home-a/chats/22222222-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl.zst", "\x28\xb5\x2f\xfd")
	require.NoError(t, os.Symlink(sess, filepath.Join(root, "link.jsonl")))

	f := discover(t, []string{root})
	var paths []string
	for _, tg := range f.Targets {
		paths = append(paths, tg.Store.Ref().Path)
	}
	assert.ElementsMatch(t, []string{sess, arch, usage, ck}, paths)
	assert.Equal(t, 2, f.Ignored, "logs.json and token usage are not stores")
	var reasons []string
	for _, is := range f.Issues {
		reasons = append(reasons, string(is.Severity)+" "+filepath.Base(is.Path)+": "+is.Reason)
	}
	assert.ElementsMatch(t, []string{
		"info link.jsonl: symbolic link not followed; pass its target to include it",
		"warning 22222222-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl.zst: zstd-compressed store: reported, not parsed",
	}, reasons)

	// One file, a chats dir, a missing path and a file that is no store.
	f = discover(t, []string{sess, filepath.Join(root, "projects/-home-a/chats"), filepath.Join(root, "nope"), filepath.Join(root, "tmp/abc/logs.json")})
	assert.Len(t, f.Targets, 2, "the session given twice is read once")
	require.Len(t, f.Issues, 3)
	var errs int
	for _, is := range f.Issues {
		if is.Severity == store.SevError {
			errs++
		}
	}
	assert.Equal(t, 2, errs)
}

// TestDiscoverWrongAgentWarns: scan --agent codex over a Qwen home reports each file it reads
// against its content (issue 8 item 11).
func TestDiscoverWrongAgentWarns(t *testing.T) {
	root := t.TempDir()
	session := write(t, root, "projects/p/chats/3cea48a5.jsonl", sessionLine)
	f := discoverAs(t, []string{root}, "codex")
	require.Len(t, f.Targets, 1)
	require.Len(t, f.Issues, 1)
	assert.Equal(t, session, f.Issues[0].Path)
	assert.Equal(t, store.SevWarning, f.Issues[0].Severity)
	assert.Contains(t, f.Issues[0].Reason, "read as a Codex rollout (--agent codex), but it looks like a qwen store")

	assert.Empty(t, discover(t, []string{root}).Issues, "detected by content: nothing to warn about")
}

// TestDiscoverRoots: Found.Roots says per root whether it could be read and how many stores
// it held; a root that is a symlink to a directory is walked (with a note), links inside stay
// not followed (issue 8 item 6, issue 9 item 10).
func TestDiscoverRoots(t *testing.T) {
	real := t.TempDir()
	sess := write(t, real, "projects/-home-a/chats/0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl", sessionLine)
	other := write(t, t.TempDir(), "x/11111111-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl", sessionLine)
	inner := filepath.Join(real, "projects/-home-a/chats/22222222-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl")
	require.NoError(t, os.Symlink(other, inner))
	link := filepath.Join(t.TempDir(), ".qwen")
	require.NoError(t, os.Symlink(real, link))
	empty := t.TempDir()
	missing := filepath.Join(empty, "nope")

	f := discover(t, []string{link, empty, missing})
	require.Len(t, f.Targets, 1)
	assert.Equal(t, sess, f.Targets[0].Store.Ref().Path, "walked through the link, by its real path")
	require.Len(t, f.Roots, 3)
	assert.Equal(t, Root{Path: link, Abs: real, LinkTarget: real, Dir: true, Stores: 1}, f.Roots[0])
	assert.Equal(t, Root{Path: empty, Abs: empty, Dir: true}, f.Roots[1])
	assert.ErrorIs(t, f.Roots[2].Err, os.ErrNotExist)
	reasons := map[string]string{}
	for _, is := range f.Issues {
		reasons[is.Path] = string(is.Severity) + ": " + is.Reason
	}
	assert.Equal(t, "info: symbolic link to "+real+": followed (links inside it are not)", reasons[link])
	assert.Equal(t, "info: symbolic link not followed; pass its target to include it", reasons[inner])

	if os.Geteuid() == 0 {
		t.Skip("running as root: a mode-000 directory is still readable, the unreadable-root case cannot be made")
	}
	locked := t.TempDir()
	require.NoError(t, os.Chmod(locked, 0))
	defer os.Chmod(locked, 0o755)
	f = discover(t, []string{locked})
	assert.ErrorIs(t, f.Roots[0].Err, os.ErrPermission, "a root that cannot be listed could not be read at all")
}

// discover is Discover with a context that is never cancelled: it cannot fail.
func discover(t testing.TB, roots []string) *Found {
	t.Helper()
	f, err := Discover(context.Background(), roots)
	require.NoError(t, err)
	return f
}

func discoverAs(t testing.TB, roots []string, agent string) *Found {
	t.Helper()
	f, err := DiscoverAs(context.Background(), roots, store.AgentID(agent))
	require.NoError(t, err)
	return f
}

// TestDiscoverStopsWhenCancelled: ctx reaches discovery (issue 10 item 3): a cancelled context
// ends the walk with its error, and no SQLite database is opened after it.
func TestDiscoverStopsWhenCancelled(t *testing.T) {
	root := t.TempDir()
	write(t, root, "projects/-home-a/chats/s.jsonl", `{"type":"user"}`+"\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f, err := Discover(ctx, []string{root})
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, f.Targets, "nothing is detected after the context is cancelled")
}

// DiscoverAs is Discover restricted to one agent's stores (all.DetectWith with the agent: its own
// reading of a forced --agent; "" detects by name and content).
func DiscoverAs(ctx context.Context, roots []string, agent store.AgentID) (*Found, error) {
	return DiscoverWith(ctx, roots, DiscoverOptions{Backend: all.Options{Agent: agent}})
}
