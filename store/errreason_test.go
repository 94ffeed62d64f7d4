package store_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionfix/sessionfix/store"
)

// A problem row names the file: ErrReason drops the path an *fs.PathError (even wrapped)
// repeats and keeps any other error whole.
func TestErrReason(t *testing.T) {
	_, err := os.ReadFile(filepath.Join(t.TempDir(), "none.json"))
	assert.Equal(t, "no such file or directory", store.ErrReason(err))
	assert.Equal(t, "no such file or directory", store.ErrReason(fmt.Errorf("read config: %w", err)))
	assert.Equal(t, "line 3: bad value", store.ErrReason(errors.New("line 3: bad value")))
}
