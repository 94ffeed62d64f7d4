package qwen

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionfix/sessionfix/agent"
)

func TestRoot(t *testing.T) {
	env := func(m map[string]string) agent.Env {
		return agent.Env{Getenv: func(k string) string { return m[k] }, Home: "/home/u"}
	}
	assert.Equal(t, "/home/u/.qwen", Root(env(nil)))
	assert.Equal(t, "/q", Root(env(map[string]string{"QWEN_HOME": "/q"})))
	assert.Equal(t, "/r", Root(env(map[string]string{"QWEN_HOME": "/q", "QWEN_RUNTIME_DIR": "/r"})))
	assert.Equal(t, "/home/u/rt", Root(env(map[string]string{"QWEN_RUNTIME_DIR": "~/rt"})))
	assert.Equal(t, []string{"$QWEN_RUNTIME_DIR (not set)", "$QWEN_HOME=/q"}, RootTried(env(map[string]string{"QWEN_HOME": "/q"})))
}
