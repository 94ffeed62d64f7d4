package usage

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestChecks: each shared check says its sentence as the commands always did, as an *Error.
func TestChecks(t *testing.T) {
	msg := func(err error) string {
		var ue *Error
		if !errors.As(err, &ue) {
			return "not a usage error"
		}
		return err.Error()
	}
	assert.NoError(t, Format("json", "table", "json"))
	assert.Equal(t, `--format must be table or json, not "x"`, msg(Format("x", "table", "json")))
	assert.Equal(t, `--format must be table, json, sarif or sqlite, not ""`, msg(Format("", "table", "json", "sarif", "sqlite")))
	assert.NoError(t, Workers(0))
	assert.Equal(t, "--workers must not be negative (0 = the number of CPUs)", msg(Workers(-1)))
	assert.NoError(t, Apply(true, false, false, true))
	assert.NoError(t, Apply(false, true, false, false))
	assert.Equal(t, "--apply and --dry-run contradict each other (nothing was changed)", msg(Apply(true, true, true, true)))
	assert.Equal(t, "--apply needs --yes when standard input is not a terminal (nothing was changed)", msg(Apply(true, false, false, false)))
	assert.Equal(t, "--quiet and --verbose contradict each other", msg(QuietVerbose(true, true)))
	assert.NoError(t, QuietVerbose(true, false))
	assert.NoError(t, DiscoverUntrusted(true, true))
	assert.Equal(t, "--discover-untrusted goes with --discover (it lets --discover start what it otherwise refuses)", msg(DiscoverUntrusted(true, false)))
	assert.NoError(t, SQLiteOut("sqlite", "f.db"))
	assert.NoError(t, SQLiteOut("json", ""))
	assert.Equal(t, "--format sqlite needs --out FILE (the fleet database; standard output cannot hold a database)", msg(SQLiteOut("sqlite", "-")))
	assert.Equal(t, "--plan needs a file name; it was given an empty one", msg(FileName("plan", "")))
	assert.NoError(t, FileName("plan", "p.json"))
}
