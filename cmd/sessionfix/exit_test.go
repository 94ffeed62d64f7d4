package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUnknownCommandAndHelpTopic is issue 8 item 5: "sessionfix frob" said "No help topic for
// 'frob'" with exit 1, and "sessionfix help fix" said "No help topic for 'help'".
func TestUnknownCommandAndHelpTopic(t *testing.T) {
	env := testEnv(t)
	r := runCLI(t, env, "", "frob")
	assert.Equal(t, exitUsage, r.code)
	assert.Equal(t, "sessionfix: unknown command \"frob\": the commands are scan, fix, undo, runs, names, audit (see sessionfix --help)\n", r.err)
	assert.Empty(t, r.out)

	r = runCLI(t, env, "", "help", "frob")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.err, `unknown command "frob"`)

	want := runCLI(t, env, "", "fix", "--help")
	assert.Equal(t, exitOK, want.code)
	assert.Contains(t, want.out, "sessionfix fix - ")
	r = runCLI(t, env, "", "help", "fix")
	assert.Equal(t, exitOK, r.code, r.err)
	assert.Equal(t, want.out, r.out, "help fix is fix --help")

	top := runCLI(t, env, "", "--help")
	r = runCLI(t, env, "", "help")
	assert.Equal(t, exitOK, r.code, r.err)
	assert.Equal(t, top.out, r.out)
	assert.Contains(t, r.out, "COMMANDS:")

	r = runCLI(t, env, "", "help", "fix", "scan")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.err, "help takes one command")
}
