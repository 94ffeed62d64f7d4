package all

import (
	"context"

	"github.com/sessionfix/sessionfix/store"
)

// Test helpers (production code calls DetectWith with its options).

// Detect is DetectWith with default options.
func Detect(path string, head []byte) Detection {
	return DetectWith(context.Background(), path, head, Options{})
}

// DetectAs is DetectWith for one agent's stores ("" = any agent).
func DetectAs(id store.AgentID, path string, head []byte) Detection {
	return DetectWith(context.Background(), path, head, Options{Agent: id})
}
