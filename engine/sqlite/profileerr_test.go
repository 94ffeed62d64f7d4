package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/sqlite"
)

// TestLoadProfileErrorNamesFileAndLine: a --profile file that does not decode is named with the
// line and column the decoder stopped at ("--profile: invalid SQLite store profile: invalid
// character '}' …" named neither before).
func TestLoadProfileErrorNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]string{
		"{\"tables\": [\n  {\"name\": 1,}\n]}\n": ":2:14: invalid SQLite store profile: invalid character '}' looking for beginning of object key string",
		"{\"name\": \"x\",\n \"tables\": 5}\n":   ":2:12: invalid SQLite store profile: json: cannot unmarshal number into Go struct field Profile.tables of type []sqlite.TableSpec",
		"{\"name\": \"x\", \"bogus\": 5}\n":      ": invalid SQLite store profile: json: unknown field \"bogus\"",
	} {
		p := filepath.Join(dir, "p.json")
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		_, err := loadProfile(p)
		require.Error(t, err)
		assert.Equal(t, p+want, err.Error())
		assert.True(t, errors.Is(err, sqlite.ErrBadProfile))
	}
}

// loadProfile reads a JSON profile (see Profile) from path and validates it. Unknown fields are
// errors, so a typo does not silently scan nothing.
func loadProfile(path string) (*sqlite.Profile, error) {
	p, _, err := sqlite.ReadProfile(path)
	return p, err
}
