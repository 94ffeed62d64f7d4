// Package jsonscan is a streaming JSON validator and locator. It reads JSON Lines or a single
// JSON document in chunks of any size, checks the grammar as JSON.parse does, and reports the
// exact byte offset, path and raw token of every string value (or object key) whose path
// matches a compiled pattern, so callers can rewrite one string without re-encoding anything
// else. Memory is bounded by nesting depth and captured tokens, never by line length.
package jsonscan
