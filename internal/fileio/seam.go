package fileio

import "context"

// The before-check seam: tests change a store at the last moment a writer can notice it (the
// change is journaled, the new content durable, the final in-use check not yet made), through
// the context rather than a field of the store contract.

type beforeCheckKey struct{}

// WithBeforeCheck returns ctx carrying f: every Writer (RewriteFile, the SQLite engine) that
// applies a change under that ctx calls f with the store's path right before its final in-use
// check. For tests; nothing sets it in a normal run.
func WithBeforeCheck(ctx context.Context, f func(path string)) context.Context {
	return context.WithValue(ctx, beforeCheckKey{}, f)
}

// BeforeCheck calls the hook ctx carries (WithBeforeCheck), if any, with path.
func BeforeCheck(ctx context.Context, path string) {
	if f, _ := ctx.Value(beforeCheckKey{}).(func(path string)); f != nil {
		f(path)
	}
}
