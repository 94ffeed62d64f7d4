package rewrite

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// A rewriting Process runs with spareProcs more processors than before it (raiseProcs) and
// gives them back when it returns; a Process that only scans leaves GOMAXPROCS alone, and so
// does any when the environment sets GOMAXPROCS.
func TestProcessApplyRaisesGOMAXPROCS(t *testing.T) {
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		t.Skip("GOMAXPROCS is set: Process leaves it alone")
	}
	before := runtime.GOMAXPROCS(0)
	run := func(apply bool) (during int) {
		dir := t.TempDir()
		p := writeSession(t, dir, "s.jsonl", call("1", "mcp__a.b__c"))
		_, err := Process(context.Background(), []store.Store{jsonl.Open(p, qwen.Session)}, naming.Policy{},
			ProcessOptions{Apply: apply, ApplyOptions: ApplyOptions{StateDir: filepath.Join(dir, "state"), Workers: 2}},
			func(r *StoreResult) error { during = runtime.GOMAXPROCS(0); return nil })
		require.NoError(t, err)
		return during
	}
	assert.Equal(t, before+2, run(true), "GOMAXPROCS while a Process rewrites: two more")
	assert.Equal(t, before, runtime.GOMAXPROCS(0), "given back")
	assert.Equal(t, before, run(false), "a scan leaves it alone")

	// Two at once share one raise.
	r1, r2 := raiseProcs(), raiseProcs()
	assert.Equal(t, before+spareProcs, runtime.GOMAXPROCS(0))
	r1()
	assert.Equal(t, before+spareProcs, runtime.GOMAXPROCS(0), "raised until the last gives it back")
	r2()
	assert.Equal(t, before, runtime.GOMAXPROCS(0))
}

// The raise is given back as the runtime's default (runtime.SetDefaultGOMAXPROCS, which keeps
// the runtime's automatic updates of GOMAXPROCS on), not by setting the number read before it
// (which turns them off for good); a GOMAXPROCS set by someone else while raised stays as set;
// with GODEBUG updatemaxprocs=0 the number read before is set back.
func TestRaiseProcsRestoresTheDefault(t *testing.T) {
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		t.Skip("GOMAXPROCS is set: raiseProcs leaves it alone")
	}
	t.Setenv("GODEBUG", "")
	before := runtime.GOMAXPROCS(0)
	defaults := 0
	old := setDefaultProcs
	setDefaultProcs = func() { defaults++; old() }
	defer func() { setDefaultProcs = old }()

	raiseProcs()()
	assert.Equal(t, 1, defaults, "given back as the runtime's default")
	assert.Equal(t, before, runtime.GOMAXPROCS(0))

	restore := raiseProcs()
	runtime.GOMAXPROCS(before + 5)
	restore()
	assert.Equal(t, before+5, runtime.GOMAXPROCS(0), "a GOMAXPROCS set while raised stays as set")
	assert.Equal(t, 1, defaults)
	setDefaultProcs()
	assert.Equal(t, before, runtime.GOMAXPROCS(0))

	t.Setenv("GODEBUG", "x=1,updatemaxprocs=0")
	defaults = 0
	raiseProcs()()
	assert.Equal(t, 0, defaults, "updates off: the number read before is set back")
	assert.Equal(t, before, runtime.GOMAXPROCS(0))
	assert.True(t, updatesOff("updatemaxprocs=1,updatemaxprocs=0"))
	assert.False(t, updatesOff("updatemaxprocs=0,updatemaxprocs=1"))
	assert.False(t, updatesOff(""))
	runtime.SetDefaultGOMAXPROCS()
}
