package htmltest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFindWithoutChromium(t *testing.T) {
	none := func(string) (string, error) { return "", errors.New("not found") }
	p, msg, fatal := find(none, "")
	assert.Equal(t, "", p)
	assert.False(t, fatal, "outside CI a missing Chromium skips")
	assert.Contains(t, msg, "apt-get install chromium")

	p, msg, fatal = find(none, "true")
	assert.Equal(t, "", p)
	assert.True(t, fatal, "with CI=true a missing Chromium fails the test")
	assert.Contains(t, msg, "CI=true")
}

func TestFindOrder(t *testing.T) {
	var asked []string
	only := func(want string) func(string) (string, error) {
		return func(n string) (string, error) {
			asked = append(asked, n)
			if n == want {
				return "/usr/bin/" + n, nil
			}
			return "", errors.New("not found")
		}
	}
	p, msg, fatal := find(only("chromium-browser"), "true")
	assert.Equal(t, "/usr/bin/chromium-browser", p)
	assert.Equal(t, "", msg)
	assert.False(t, fatal)
	assert.Equal(t, []string{"chromium", "chromium-browser"}, asked)
}
