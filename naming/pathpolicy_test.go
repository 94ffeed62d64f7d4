package naming

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Add: the only home's policy is the Default; with several homes each store path gets its
// home's policy and Default stays the zero value.
func TestPathPolicyAdd(t *testing.T) {
	var one PathPolicy[string]
	one.Add("home-a", []string{"/a/1", "/a/2"}, true)
	assert.Equal(t, "home-a", one.Default)
	assert.Nil(t, one.ByPath)
	assert.Equal(t, "home-a", one.For("/anything"))

	var two PathPolicy[string]
	two.Add("home-a", []string{"/a/1", "/a/2"}, false)
	two.Add("home-b", []string{"/b/1"}, false)
	assert.Equal(t, "", two.Default)
	assert.Len(t, two.ByPath, 3)
	assert.Equal(t, "home-a", two.For("/a/2"))
	assert.Equal(t, "home-b", two.For("/b/1"))
	assert.Equal(t, "", two.For("/c/1"))
	assert.Same(t, two.ByPath["/a/1"], two.ByPath["/a/2"], "one copy per home")
}
