package rulefix

import (
	"errors"
	"github.com/sessionfix/sessionfix/agent/all"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/exitcode"
)

// TestEndCode: a run's exit status as fix --rules always ended: a problem makes it partial (3),
// which wins over a file in use (4); a declined question is 6; else 0.
func TestEndCode(t *testing.T) {
	for _, c := range []struct {
		name string
		end  End
		want int
	}{
		{"clean", End{}, 0},
		{"applied", End{Applied: true}, 0},
		{"in use", End{InUse: true}, exitcode.InUse},
		{"problem", End{Problems: []string{"x"}}, exitcode.Partial},
		{"problem wins over in use", End{InUse: true, Problems: []string{"x"}}, exitcode.Partial},
		{"declined", End{Declined: true}, exitcode.Declined},
		{"apply error alone", End{Applied: true, ApplyErr: errors.New("x")}, 0},
	} {
		assert.Equal(t, c.want, c.end.Code(), c.name)
	}
}

// TestForNamesTheMigrations: --agent "" is the default migration; an agent without one is nil
// with the rules every migration migrates, the default's first.
func TestForNamesTheMigrations(t *testing.T) {
	d := Default()
	require.NotNil(t, d, "Claude Code has the default rule migration")
	a, names := For("")
	assert.Equal(t, d, a)
	assert.Nil(t, names)
	a, names = For(string(d.Core().ID))
	assert.Equal(t, d, a)
	assert.Nil(t, names)
	a, names = For("no-such-agent")
	assert.Nil(t, a)
	assert.Equal(t, all.RuleFixOf(d).Rules, names[0])
	assert.Len(t, names, len(Fixers()))
}
