package report

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionfix/sessionfix/engine/sqlite"
)

// ProfileOf names a database's profile through store.Profiled (pipeline imports no engine).
func TestProfileOf(t *testing.T) {
	assert.Equal(t, "crush", ProfileOf(sqlite.OpenWith("x.db", &sqlite.Profile{Name: "crush"}, sqlite.Options{})))
	assert.Equal(t, "", ProfileOf(sqlite.Open("x.db", sqlite.Options{})), "before detection")
}
