package inventory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sessionfix/sessionfix/store/settings"
)

// DefaultTimeout bounds the discovery of one server (start, initialize, every tools/list
// page) when DiscoverOptions.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// DefaultParallel is the number of servers discovered at once when DiscoverOptions.Parallel
// is zero.
const DefaultParallel = 4

// ErrNoTransport: the server has no command, httpUrl or url (e.g. a tcp server).
var ErrNoTransport = errors.New("no command, httpUrl or url to reach the server")

// DiscoverOptions carries what Discover needs from the outside world.
type DiscoverOptions struct {
	// Env is the parent environment of stdio servers; each server's own env (already
	// $VAR-expanded by settings.Load) is laid over it, as Qwen Code does
	// ({...process.env, ...server.env}). Its PATH also resolves a bare command name, as
	// Node's spawn does with options.env.
	Env settings.Env
	// Timeout bounds each server; zero means DefaultTimeout.
	Timeout time.Duration
	// Parallel is the number of servers discovered at once; zero means DefaultParallel.
	Parallel int
	// Stderr receives the servers' stderr; nil discards it (it may print secrets).
	Stderr io.Writer
	// HTTPClient is the base client for httpUrl / url servers; nil means a client with
	// http.DefaultTransport. Configured headers are added to every request.
	HTTPClient *http.Client
	// ClientName and ClientVersion are sent in initialize; empty means "sessionfix" / "dev".
	ClientName, ClientVersion string
}

// ServerError reports one server whose tools could not be listed. Err never holds header,
// env or argument values.
type ServerError struct {
	Server string
	Err    error
	// secrets are substrings of the server's URL (query values, the userinfo password) that
	// the cause may quote and Error must not print.
	secrets []string
}

// Error returns "discover MCP server "<key>": <cause>", with the URL's query values and
// password replaced by [redacted] (transport errors quote the URL).
func (e *ServerError) Error() string {
	msg := fmt.Sprint(e.Err)
	for _, sec := range e.secrets {
		msg = strings.ReplaceAll(msg, sec, settings.Redacted)
	}
	return fmt.Sprintf("discover MCP server %q: %s", e.Server, msg)
}

// urlSecrets lists the parts of a server URL that may hold credentials: each query value
// (raw and decoded) and the userinfo password. Longer strings come first.
func urlSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	if p, ok := u.User.Password(); ok && p != "" {
		out = append(out, p, url.QueryEscape(p))
	}
	for _, part := range strings.Split(u.RawQuery, "&") {
		if _, v, ok := strings.Cut(part, "="); ok && v != "" {
			out = append(out, v)
			if d, err := url.QueryUnescape(v); err == nil && d != v {
				out = append(out, d)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// Unwrap returns the cause.
func (e *ServerError) Unwrap() error { return e.Err }

// Discover lists the tools of every server by starting it (stdio: command, args, cwd, env) or
// connecting to it (httpUrl, or url — SSE when type is "sse", else streamable HTTP, as
// current Qwen Code's createTransport does) with the official MCP Go SDK, then paging
// through tools/list. Servers are handled Parallel at a time, each within Timeout. A server
// that fails is returned as a *ServerError (sorted by server key) and left out of the
// inventory; the others go on. Tools get SourceDiscovered and the server's trust flag.
//
// Tool names are kept exactly as listed, including names that the MCP spec's name rules
// reject (dots are allowed, CJK is not): those are the names the audit is about.
func Discover(ctx context.Context, servers []settings.MCPServer, opts DiscoverOptions) (*Inventory, []*ServerError) {
	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	type result struct {
		tools []string
		err   error
	}
	results := make([]result, len(servers))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			tools, err := listTools(ctx, s, opts)
			results[i] = result{tools, err}
		}()
	}
	wg.Wait()

	inv := New()
	var errs []*ServerError
	for i, s := range servers {
		if results[i].err != nil {
			errs = append(errs, &ServerError{Server: s.Key, Err: results[i].err, secrets: urlSecrets(s.URL)})
			continue
		}
		inv.Add(s.Key, s.Trust, SourceDiscovered, results[i].tools...)
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Server < errs[j].Server })
	return inv, errs
}

// listTools connects to one server and returns every tool name of every tools/list page.
func listTools(ctx context.Context, s settings.MCPServer, opts DiscoverOptions) ([]string, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	transport, err := newTransport(ctx, s, opts)
	if err != nil {
		return nil, err
	}
	name, version := opts.ClientName, opts.ClientVersion
	if name == "" {
		name = "sessionfix"
	}
	if version == "" {
		version = "dev"
	}
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: version}, nil)
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", contextCause(ctx, err))
	}
	defer func() { _ = session.Close() }()
	var tools []string
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", contextCause(ctx, err))
		}
		tools = append(tools, tool.Name)
	}
	return tools, nil
}

// contextCause makes a timeout recognizable (errors.Is(err, context.DeadlineExceeded)) even
// when the SDK reports it as a closed connection.
func contextCause(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%w (%v)", ctxErr, err)
	}
	return err
}

func newTransport(ctx context.Context, s settings.MCPServer, opts DiscoverOptions) (mcp.Transport, error) {
	switch s.Transport {
	case settings.TransportStdio:
		return stdioTransport(ctx, s, opts)
	case settings.TransportHTTP:
		return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: httpClient(s, opts),
			MaxRetries: -1, DisableStandaloneSSE: true}, nil
	case settings.TransportSSE:
		return &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: httpClient(s, opts)}, nil
	default:
		return nil, ErrNoTransport
	}
}

func stdioTransport(ctx context.Context, s settings.MCPServer, opts DiscoverOptions) (mcp.Transport, error) {
	env := settings.Env{}
	for k, v := range opts.Env {
		env[k] = v
	}
	for k, v := range s.Env {
		env[k] = v.Reveal()
	}
	path, err := lookPath(s.Command, env["PATH"], s.Cwd)
	if err != nil {
		return nil, fmt.Errorf("start %q: %w", s.Command, err)
	}
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = a.Reveal()
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env.List()
	cmd.Dir = s.Cwd
	cmd.Stderr = opts.Stderr
	cmd.WaitDelay = time.Second
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
}

// lookPath resolves a command the way Node's spawn does: a name with a path separator is
// used as is (relative to dir when relative), a bare name is searched in pathList (the
// child's PATH), never in this process's PATH.
func lookPath(command, pathList, dir string) (string, error) {
	if command == "" {
		return "", exec.ErrNotFound
	}
	if strings.ContainsRune(command, filepath.Separator) || strings.ContainsRune(command, '/') {
		if !filepath.IsAbs(command) && dir != "" {
			command = filepath.Join(dir, command)
		}
		if err := executable(command); err != nil {
			return "", err
		}
		return command, nil
	}
	for _, d := range filepath.SplitList(pathList) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, command)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s: %w", p, exec.ErrNotFound)
	}
	return nil
}

// httpClient returns a client that adds the server's headers to every request.
func httpClient(s settings.MCPServer, opts DiscoverOptions) *http.Client {
	base := opts.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	c := *base
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if len(s.Headers) > 0 {
		rt = &headerTransport{base: rt, headers: s.Headers}
	}
	c.Transport = rt
	return &c
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]settings.Secret
}

// RoundTrip sets the configured headers on a copy of req and sends it.
func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v.Reveal())
	}
	return t.base.RoundTrip(req)
}
