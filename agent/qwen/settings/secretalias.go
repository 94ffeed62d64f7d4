package settings

import "github.com/sessionfix/sessionfix/internal/secret"

// Secret is secret.Secret: a value from settings that never reaches any output (the type
// lives in internal/secret so that every agent room can hand secrets over, not only Qwen's).
type Secret = secret.Secret

// Redacted is secret.Redacted, what every printed form of a Secret shows.
const Redacted = secret.Redacted
