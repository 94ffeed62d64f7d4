package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// events is a `go test -json` stream as Go 1.26 writes it: a passing package, one with two
// skipped browser tests and a failing test, and a package without tests.
const events = `{"Action":"start","Package":"example.com/m/a"}
{"Action":"run","Package":"example.com/m/a","Test":"TestOK"}
{"Action":"output","Package":"example.com/m/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"example.com/m/a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"example.com/m/a","Test":"TestOK"}
{"Action":"output","Package":"example.com/m/a","Output":"PASS\n"}
{"Action":"output","Package":"example.com/m/a","Output":"ok  \texample.com/m/a\t0.01s\n"}
{"Action":"pass","Package":"example.com/m/a"}
{"Action":"run","Package":"example.com/m/reports","Test":"TestBrowser"}
{"Action":"output","Package":"example.com/m/reports","Test":"TestBrowser","Output":"=== RUN   TestBrowser\n"}
{"Action":"output","Package":"example.com/m/reports","Test":"TestBrowser","Output":"    browser_test.go:47: skipped: no chromium on PATH (apt-get install chromium)\n"}
{"Action":"output","Package":"example.com/m/reports","Test":"TestBrowser","Output":"--- SKIP: TestBrowser (0.00s)\n"}
{"Action":"skip","Package":"example.com/m/reports","Test":"TestBrowser"}
{"Action":"run","Package":"example.com/m/reports","Test":"TestShot/wide"}
{"Action":"output","Package":"example.com/m/reports","Test":"TestShot/wide","Output":"    shot_test.go:9: skipped: no chromium on PATH (apt-get install chromium)\n"}
{"Action":"skip","Package":"example.com/m/reports","Test":"TestShot/wide"}
{"Action":"run","Package":"example.com/m/reports","Test":"TestBad"}
{"Action":"output","Package":"example.com/m/reports","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"example.com/m/reports","Test":"TestBad","Output":"    bad_test.go:3: want 1, got 2\n"}
{"Action":"output","Package":"example.com/m/reports","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"example.com/m/reports","Test":"TestBad"}
{"Action":"output","Package":"example.com/m/reports","Output":"FAIL\n"}
{"Action":"output","Package":"example.com/m/reports","Output":"FAIL\texample.com/m/reports\t0.02s\n"}
{"Action":"fail","Package":"example.com/m/reports"}
{"Action":"output","Package":"example.com/m/c","Output":"?   \texample.com/m/c\t[no test files]\n"}
{"Action":"skip","Package":"example.com/m/c"}
`

func TestSummarize(t *testing.T) {
	var out strings.Builder
	skips, failed, err := Summarize(strings.NewReader(events), &out)
	require.NoError(t, err)
	assert.True(t, failed)
	assert.Equal(t, "ok  \texample.com/m/a\t0.01s\n"+
		"=== RUN   TestBad\n    bad_test.go:3: want 1, got 2\n--- FAIL: TestBad (0.00s)\n"+
		"FAIL\nFAIL\texample.com/m/reports\t0.02s\n"+
		"?   \texample.com/m/c\t[no test files]\n", out.String())
	assert.Equal(t, []Skip{
		{"example.com/m/reports", "TestBrowser", "no chromium on PATH (apt-get install chromium)"},
		{"example.com/m/reports", "TestShot/wide", "no chromium on PATH (apt-get install chromium)"},
	}, skips)
	assert.Equal(t, "skipped 2 tests: no chromium on PATH (apt-get install chromium) (reports.TestBrowser, reports.TestShot/wide)", Line(skips))
}

func TestSummarizePassingRun(t *testing.T) {
	passing := strings.Join(strings.SplitAfter(events, "\n")[:8], "") // package a only
	var out strings.Builder
	skips, failed, err := Summarize(strings.NewReader(passing), &out)
	require.NoError(t, err)
	assert.False(t, failed)
	assert.Empty(t, skips)
	assert.Equal(t, "ok  \texample.com/m/a\t0.01s\n", out.String())
}

func TestLine(t *testing.T) {
	assert.Equal(t, "skipped: none", Line(nil))
	assert.Equal(t, "skipped 2 tests: not root (x.TestDev); no sqlite3 shell (y.TestShell)", Line([]Skip{
		{"m/x", "TestDev", "not root."}, {"m/y", "TestShell", "no sqlite3 shell"},
	}))
}

// Helper processes (TestHelper…, skipped when not run as a helper) are not skipped tests: they
// are named apart and not counted.
func TestLineHelperProcesses(t *testing.T) {
	assert.Equal(t, "skipped 1 test: not root (x.TestDev) (not counted: 2 helper processes, not tests: sessionfix.TestHelperSQLiteWriteLock, sqlite.TestHelperHoldWriteLock)", Line([]Skip{
		{"m/x", "TestDev", "not root."},
		{"m/engine/sqlite", "TestHelperHoldWriteLock", "not a helper process"},
		{"m/cmd/sessionfix", "TestHelperSQLiteWriteLock", "not a helper process"},
	}))
	assert.Equal(t, "skipped: none (not counted: 1 helper process, not tests: y.TestHelperCrash)", Line([]Skip{
		{"m/y", "TestHelperCrash", "helper"},
	}))
	assert.Equal(t, "skipped 1 test: slow (y.TestHelpers)", Line([]Skip{{"m/y", "TestHelpers", "slow"}}), "TestHelpers is not a helper process")
}

func TestNotAnEventFails(t *testing.T) {
	var out strings.Builder
	_, failed, err := Summarize(strings.NewReader("go: updates to go.mod needed\n"), &out)
	require.NoError(t, err)
	assert.True(t, failed)
	assert.Equal(t, "go: updates to go.mod needed\n", out.String())
}
