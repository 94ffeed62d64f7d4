package settings

import (
	"fmt"
	"io"
)

// Redacted is what every printed form of a Secret shows instead of its value.
const Redacted = "[redacted]"

// Secret holds a value from settings that must never reach any output, report or log:
// MCP server env values, headers and args (stores.md §2 "Secrets"; Qwen Code itself drops
// args, env and headers from its connection error messages). Every formatting path — String,
// GoString, Format (all verbs, so %v, %+v, %#v, %s, %q, %x), MarshalJSON and MarshalText —
// prints Redacted. Reveal returns the value; call it only to start a server.
//
// The zero Secret holds "".
type Secret struct {
	v string
}

// NewSecret wraps v.
func NewSecret(v string) Secret { return Secret{v: v} }

// Reveal returns the secret value. The only legitimate use is handing it to a child process
// or an HTTP request (inventory.Discover).
func (s Secret) Reveal() string { return s.v }

// IsZero reports whether the secret holds the empty string.
func (s Secret) IsZero() bool { return s.v == "" }

// String returns Redacted.
func (s Secret) String() string { return Redacted }

// GoString returns Redacted (for %#v).
func (s Secret) GoString() string { return Redacted }

// Format writes Redacted for every verb and flag.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, Redacted) }

// MarshalJSON returns the JSON string "[redacted]".
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }

// MarshalText returns Redacted (used for map keys and by encoders that prefer text).
func (s Secret) MarshalText() ([]byte, error) { return []byte(Redacted), nil }
