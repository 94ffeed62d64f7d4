package mcpconfig

import (
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/internal/secret"
)

// Transport is how an MCP server is reached.
type Transport string

// Transports. httpUrl, and url without "type": "sse", are streamable HTTP; url with
// "type": "sse" is the older SSE transport (older agent releases treated a bare url as SSE).
const (
	TransportStdio Transport = "stdio"
	TransportHTTP  Transport = "http"
	TransportSSE   Transport = "sse"
	// TransportNone: no command, httpUrl or url (e.g. a tcp server); cannot be started.
	TransportNone Transport = ""
)

// Pos is where a value is in its file: data[Offset:End] are its bytes (quotes included), at
// 1-based Line and byte Column.
type Pos struct {
	Offset, End  int
	Line, Column int
}

// Server is one MCP server an agent's config launches, the way --discover starts it: over
// Transport (Reach), stdio runs Command with Args in Cwd with Env laid over the process
// environment, HTTP and SSE reach URL with Headers. String fields hold expanded values (what
// the agent uses after loading); Args, Env and Headers values are secrets and never printed.
// It is the one server type of every agent room (agent.Server is this type).
type Server struct {
	// Key is the configured server key: the <server> of mcp__<server>__<tool>.
	Key string `json:"key"`
	// Pos is where the server's key is in its file (Read); zero for a server from elsewhere
	// (a TOML config).
	Pos Pos `json:"-"`
	// Transport is how the server is reached; "" for a server built by hand is derived by
	// Reach.
	Transport Transport       `json:"transport"`
	Command   string          `json:"command,omitempty"`
	Args      []secret.Secret `json:"args,omitempty"`
	Cwd       string          `json:"cwd,omitempty"`
	// URL is httpUrl when set, else url.
	URL string `json:"url,omitempty"`
	// URLKey is the config key URL came from ("httpUrl", "url"), "" when none.
	URLKey string `json:"urlKey,omitempty"`
	// Type is the config's "type" field ("http", "sse", "stdio"…) when present.
	Type string `json:"type,omitempty"`
	// TimeoutMS is the config's "timeout" field (milliseconds), 0 when absent.
	TimeoutMS int64 `json:"timeoutMs,omitempty"`
	// Trust is the config's "trust" flag (the agent's default permission for the server's
	// tools, where it has one).
	Trust bool `json:"trust"`
	// Env and Headers map names (printable) to values (secret).
	Env     map[string]secret.Secret `json:"env,omitempty"`
	Headers map[string]secret.Secret `json:"headers,omitempty"`
	// Origin is the config file the server was read from and whether it may be started
	// (--discover starts only a server whose Origin is Checked and not Untrusted, unless told
	// otherwise). Never printed.
	Origin Origin `json:"-"`
}

// Origin is where a server's launch description comes from: the config file read (Path) and
// what the file's owner and mode say (ReadFile). A server whose config another user owns or can
// write is that user's: starting it runs that user's command as this process, as root for a
// scheduled audit over users' homes (issue 30 finding 1), so --discover does not start it
// without --discover-untrusted. A server not built from a file read with ReadFile (Checked
// false) is not started either: whoever built it did not look.
type Origin struct {
	Path string
	// Checked: the file's owner and mode were looked at (the fstat of what was read).
	Checked bool
	// Untrusted says why the file's commands must not run without the operator's word
	// (owner.Untrusted: "it belongs to uid 1001 (u), not to you (uid 0 (root))"); "" when they
	// may.
	Untrusted string
}

// StartRefusal says why --discover must not start s without --discover-untrusted ("" when it
// may).
func (s Server) StartRefusal() string {
	switch {
	case !s.Origin.Checked && s.Origin.Path == "":
		return "where its launch description comes from was not checked"
	case !s.Origin.Checked:
		return "its config " + s.Origin.Path + " was not checked for who owns it"
	case s.Origin.Untrusted != "":
		return "its config " + s.Origin.Path + " is not yours to run: " + s.Origin.Untrusted
	}
	return ""
}

// ReadFile reads the config file at path as sessionfix reads any file a user may control
// (owner.ReadFile: as root no link followed out of its owner's reach, no FIFO waited on) and
// returns its bytes with its Origin: who owns what was read.
func ReadFile(path string) ([]byte, Origin, error) {
	data, fi, err := owner.ReadFile(path)
	if err != nil {
		return nil, Origin{Path: path}, err
	}
	return data, Origin{Path: path, Checked: true, Untrusted: owner.Untrusted(fi)}, nil
}

// transportOf is the transport of a config's server entry: httpUrl → HTTP; url → SSE with
// "type": "sse", else HTTP; else command → stdio; else none.
func transportOf(urlKey, typ, command string) Transport {
	switch {
	case urlKey == "httpUrl":
		return TransportHTTP
	case urlKey == "url" && typ == "sse":
		return TransportSSE
	case urlKey == "url":
		return TransportHTTP
	case command != "":
		return TransportStdio
	}
	return TransportNone
}

// Reach is how s is started: its Transport when set, else stdio when it has a Command, else
// streamable HTTP when it has a URL (a server built from a config without transport keys,
// such as a TOML one), else TransportNone.
func (s Server) Reach() Transport {
	switch {
	case s.Transport != "":
		return s.Transport
	case s.Command != "":
		return TransportStdio
	case s.URL != "":
		return TransportHTTP
	}
	return TransportNone
}
