package permission

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRefusedNow(t *testing.T) {
	for now, want := range map[string]bool{"refused": true, "ignored": true, "match": false, "no": false, "": false} {
		assert.Equal(t, want, RefusedNow(now), now)
	}
	assert.Equal(t, ChangeGained, ChangeOf(Matched, NoMatch))
	assert.Equal(t, ChangeLost, ChangeOf(Refused, Matched))
	assert.Equal(t, ChangeSame, ChangeOf(Refused, NoMatch))
}
