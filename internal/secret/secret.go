// Package secret holds Secret: a value from an agent's settings (MCP server args, env values,
// headers) that never reaches any output. A leaf (internal/layering
// TestLeavesImportNothingOfTheModule), so every agent room, inventory and the settings parsers
// can share it.
package secret

import (
	"fmt"
	"io"
)

// Redacted is what every printed form of a Secret shows instead of its value.
const Redacted = "[redacted]"

// Secret holds a value from settings that must never reach any output, report or log:
// MCP server env values, headers and args (stores.md §2 "Secrets"; the agents' MCP clients
// themselves drop args, env and headers from their connection error messages). Every formatting path — String,
// GoString, Format (all verbs, so %v, %+v, %#v, %s, %q, %x), MarshalJSON and MarshalText —
// prints Redacted. Reveal returns the value; call it only to start a server.
//
// The value sits behind a pointer on purpose: when fmt meets a bad verb anywhere in a value
// (e.g. "%s" on a struct holding an int), it prints the whole value by reflection without
// calling any method, and it dereferences pointers only at the top level — so a nested
// Secret then shows as an address, never as its text.
//
// The zero Secret holds "".
type Secret struct {
	box *secretBox
}

type secretBox struct{ v string }

// NewSecret wraps v.
func NewSecret(v string) Secret { return Secret{box: &secretBox{v: v}} }

// Reveal returns the secret value. The only legitimate use is handing it to a child process
// or an HTTP request (inventory.Discover).
func (s Secret) Reveal() string {
	if s.box == nil {
		return ""
	}
	return s.box.v
}

// IsZero reports whether the secret holds the empty string.
func (s Secret) IsZero() bool { return s.Reveal() == "" }

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
