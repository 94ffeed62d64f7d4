package settings

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/sessionfix/sessionfix/internal/secret"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secretSettings holds a secret in every place settings can: env and header values (literal
// and expanded from the environment), args, and values of the wrong type (which produce
// warnings).
const secretSettings = `{
  "mcpServers": {
    "srv": {
      "command": "node",
      "args": ["--api-key", "LITERAL-ARG-SECRET"],
      "env": {"TOKEN": "LITERAL-ENV-SECRET", "FROM_ENV": "$ENV_SECRET", "BAD": 42},
      "headers": {"Authorization": "Bearer LITERAL-HEADER-SECRET", "X": "${ENV_SECRET}"}
    },
    "web": {"httpUrl": "https://h/mcp", "headers": {"Cookie": "LITERAL-COOKIE-SECRET"}}
  },
  "permissions": {"allow": ["mcp__srv"]}
}`

var secretValues = []string{"LITERAL-ARG-SECRET", "LITERAL-ENV-SECRET", "LITERAL-HEADER-SECRET",
	"LITERAL-COOKIE-SECRET", "EXPANDED-ENV-SECRET"}

func assertNoSecret(t testing.TB, what string, out string) {
	t.Helper()
	for _, s := range secretValues {
		assert.NotContains(t, out, s, "%s leaks %s", what, s)
	}
}

func TestSecretsNeverPrinted(t *testing.T) {
	f, err := Parse("s.json", []byte(secretSettings), ScopeUser, Env{"ENV_SECRET": "EXPANDED-ENV-SECRET"})
	require.NoError(t, err)
	srv := f.MCPServers[0]
	// The values are there for whoever starts the server…
	require.Equal(t, "LITERAL-ARG-SECRET", srv.Args[1].Reveal())
	require.Equal(t, "EXPANDED-ENV-SECRET", srv.Env["FROM_ENV"].Reveal())
	require.Equal(t, "Bearer LITERAL-HEADER-SECRET", srv.Headers["Authorization"].Reveal())
	require.NotEmpty(t, f.Warnings, "the non-string env value produces a warning")

	// …and never in any printed form of any exported value holding them.
	values := map[string]any{
		"File":       f,
		"*File":      *f,
		"MCPServer":  srv,
		"*MCPServer": &srv,
		"Merged":     Merge(f),
		"Secret":     srv.Env["TOKEN"],
		"[]Secret":   srv.Args,
		"map":        srv.Headers,
		"Warnings":   f.Warnings,
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%T %v"} {
				assertNoSecret(t, name+" "+verb, fmt.Sprintf(verb, v))
			}
			b, err := json.Marshal(v)
			require.NoError(t, err)
			assertNoSecret(t, name+" JSON", string(b))
			b, err = json.MarshalIndent(v, "", "  ")
			require.NoError(t, err)
			assertNoSecret(t, name+" indented JSON", string(b))
		})
	}
	for _, w := range f.Warnings {
		assertNoSecret(t, "warning", w.String())
	}
}

func TestSecretForms(t *testing.T) {
	s := secret.NewSecret("hunter2")
	assert.Equal(t, Redacted, s.String())
	assert.Equal(t, Redacted, fmt.Sprintf("%#v", s))
	assert.Equal(t, Redacted, fmt.Sprintf("%10.3q", s))
	b, err := json.Marshal(map[string]Secret{"k": s})
	require.NoError(t, err)
	assert.JSONEq(t, `{"k": "[redacted]"}`, string(b))
	txt, err := s.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, Redacted, string(txt))
	assert.Equal(t, "hunter2", s.Reveal())
	assert.False(t, s.IsZero())
	assert.True(t, Secret{}.IsZero())
}
