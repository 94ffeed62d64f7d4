package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValues(t *testing.T) {
	v := Values{"acme-config": {"a.toml", "b.toml"}, "acme-shared": {"true"}}
	assert.Equal(t, "b.toml", v.String("acme-config"), "the last value wins")
	assert.Equal(t, []string{"a.toml", "b.toml"}, v.Strings("acme-config"))
	assert.True(t, v.Bool("acme-shared"))
	assert.False(t, v.Bool("acme-config"))
	assert.Equal(t, "", v.String("absent"))
	assert.Nil(t, v.Strings("absent"))
	var none Values
	assert.Equal(t, "", none.String("acme-config"), "a nil Values has no option")
}
