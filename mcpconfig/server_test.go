package mcpconfig

import "testing"

// Reach keeps a transport the config gave (an SSE server stays SSE) and derives one for a
// server built without transport keys (Codex's TOML): Command → stdio, else URL → streamable
// HTTP, else none.
func TestReach(t *testing.T) {
	cases := []struct {
		in   Server
		want Transport
	}{
		{Server{Key: "events", Transport: TransportSSE, URL: "http://127.0.0.1:1/sse", URLKey: "url", Type: "sse"}, TransportSSE},
		{Server{Key: "a", Command: "run", URL: "http://x"}, TransportStdio},
		{Server{Key: "b", URL: "http://x"}, TransportHTTP},
		{Server{Key: "c"}, TransportNone},
	}
	for _, c := range cases {
		if got := c.in.Reach(); got != c.want {
			t.Errorf("Reach(%+v) = %q, want %q", c.in, got, c.want)
		}
	}
}
