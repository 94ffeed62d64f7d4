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
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sessionfix/sessionfix/internal/secret"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpinventory"
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
	// $VAR-expanded by the config reader) is laid over it, as the agents' MCP clients do
	// ({...process.env, ...server.env}). Its PATH also resolves a bare command name, as
	// Node's spawn does with options.env.
	Env mcpconfig.Env
	// Timeout bounds each server; zero means DefaultTimeout.
	Timeout time.Duration
	// Parallel is the number of servers discovered at once; zero means DefaultParallel.
	Parallel int
	// Stderr also receives the servers' stderr, unredacted; nil: only the last lines are
	// kept, redacted, for the ServerError.
	Stderr io.Writer
	// HTTPClient is the base client for httpUrl / url servers; nil means a client with
	// http.DefaultTransport. Configured headers are added to every request.
	HTTPClient *http.Client
	// ClientName and ClientVersion are sent in initialize; empty means "sessionfix" / "dev".
	ClientName, ClientVersion string
	// AllowUntrusted starts servers whose config another user owns or can write, or whose
	// owner was not checked (mcpconfig.Server.StartRefusal): --discover-untrusted. Without it
	// such a server is not started (an *UntrustedError for it).
	AllowUntrusted bool
}

// UntrustedError is a server Discover did not start: its config is another user's (or could
// be written by another), so its command would run that user's program as this process — as
// root, for a scheduled audit over users' homes (issue 30 finding 1). Nothing was started and no
// request sent (an HTTP server's headers could carry this process's environment).
type UntrustedError struct {
	Reason string // mcpconfig.Server.StartRefusal
}

func (e *UntrustedError) Error() string {
	return "not started: " + e.Reason + "; its command would run as you: pass --discover-untrusted to start it anyway"
}

// ServerError reports one server whose tools could not be listed. Nothing it prints holds a
// configured secret: env, header and secret-looking argument values, the bearer token, the
// URL's user name, password, secret-looking path segments, query and fragment, and the values
// of secret-named variables of the parent environment are replaced by secret.Redacted in
// Error, in Stderr, and wherever the cause quotes them (issue 8 item 12, issue 9 item 9).
type ServerError struct {
	Server string
	Err    error
	// Command is the stdio server's command as configured (its arguments are not shown: they
	// may be secrets); "" for a URL server.
	Command string
	// Exit is how the command ended ("exit status 3", "signal: killed"), "" when it did not
	// start or was not waited for.
	Exit string
	// Stderr holds the last lines the command wrote to its standard error (at most
	// stderrTailLines, redacted).
	Stderr []string
	// secrets are the values Error must not print, longest first.
	secrets []string
	// urls are the forms of the server URL a cause may quote, each with its redacted form.
	urls [][2]string
}

// stderrTailLines and stderrTailBytes bound ServerError.Stderr.
const (
	stderrTailLines = 5
	stderrTailBytes = 4 << 10
)

// Error returns "discover MCP server "<key>": <cause>[; command "<cmd>" <exit>][; its stderr
// ended with: <line> | <line>]", redacted.
func (e *ServerError) Error() string {
	msg := e.redact(fmt.Sprint(e.Err))
	if e.Command != "" {
		msg += fmt.Sprintf("; command %q", e.redact(e.Command))
		if e.Exit != "" {
			msg += " ended with " + e.Exit
		}
		if len(e.Stderr) == 0 {
			msg += "; it wrote nothing to stderr"
		} else {
			msg += "; its stderr ended with: " + strings.Join(e.Stderr, " | ")
		}
	}
	return fmt.Sprintf("discover MCP server %q: %s", e.Server, msg)
}

// redact replaces every URL form and every secret value in msg.
func (e *ServerError) redact(msg string) string {
	for _, u := range e.urls {
		msg = strings.ReplaceAll(msg, u[0], u[1])
	}
	for _, sec := range e.secrets {
		msg = strings.ReplaceAll(msg, sec, secret.Redacted)
	}
	return msg
}

// newServerError builds the error of server s, with what must be redacted from it.
func newServerError(s mcpconfig.Server, err error, proc *stdioProc, parent mcpconfig.Env) *ServerError {
	e := &ServerError{Server: s.Key, Err: err}
	e.secrets = serverSecrets(s, parent)
	var urlParts []string
	e.urls, urlParts = urlForms(s.URL)
	e.secrets = append(e.secrets, urlParts...)
	sortLongestFirst(e.secrets)
	if proc != nil {
		e.Command = s.Command
		e.Exit = proc.exit()
		for _, l := range proc.stderr.lines(stderrTailLines) {
			e.Stderr = append(e.Stderr, e.redact(l))
		}
	}
	return e
}

// secretName matches environment variable names that hold credentials.
var secretName = regexp.MustCompile(`(?i)(token|secret|passw|key|auth|credential|cookie)`)

// minSecretLen: shorter values ("1", "on") are not searched for, they would blank out
// ordinary words and cannot be much of a secret.
const minSecretLen = 4

// serverSecrets lists the configured values of s that may be secrets: every env and header
// value (and the credential after "Bearer "/"Basic "), argument values that follow a
// secret-named flag or sit in a --name=value with a secret name, long opaque arguments, and
// the values of secret-named variables of the parent environment.
func serverSecrets(s mcpconfig.Server, parent mcpconfig.Env) []string {
	var out []string
	add := func(v string) {
		if len(v) >= minSecretLen {
			out = append(out, v)
		}
	}
	for _, v := range s.Env {
		add(v.Reveal())
	}
	for _, v := range s.Headers {
		h := v.Reveal()
		add(h)
		if _, cred, ok := strings.Cut(h, " "); ok {
			add(strings.TrimSpace(cred))
		}
	}
	prevSecret := false
	for _, a := range s.Args {
		v := a.Reveal()
		switch name, val, ok := strings.Cut(v, "="); {
		case prevSecret:
			add(v)
		case ok && strings.HasPrefix(name, "-") && secretName.MatchString(name):
			add(val)
		case len(v) >= 20 && !strings.ContainsAny(v, "/@ ") && !strings.HasPrefix(v, "-"):
			add(v)
		}
		prevSecret = strings.HasPrefix(v, "-") && !strings.Contains(v, "=") && secretName.MatchString(v)
	}
	for k, v := range parent {
		if secretName.MatchString(k) {
			add(v)
		}
	}
	return out
}

func sortLongestFirst(ss []string) {
	sort.Slice(ss, func(i, j int) bool { return len(ss[i]) > len(ss[j]) })
}

// urlForms returns the forms of a server URL a transport error may quote (as configured, as
// net/url writes it back, with the password masked as net/http does), each paired with its
// redacted form, and the URL's secret parts alone (user name, password, secret-looking path
// segments, the query and each query value, the fragment; raw and decoded).
func urlForms(raw string) (forms [][2]string, parts []string) {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return nil, nil
	}
	// URL parts are credentials by position: redacted from 3 bytes on (inside the whole URL
	// any length is; a 1- or 2-byte value alone would blank out ordinary characters).
	add := func(v string) {
		for _, x := range []string{v, unescape(url.PathUnescape, v), unescape(url.QueryUnescape, v)} {
			if len(x) >= 3 {
				parts = append(parts, x)
			}
		}
	}
	red := &url.URL{Scheme: u.Scheme, Host: u.Host, Opaque: u.Opaque}
	if u.User != nil {
		red.User = url.User(secret.Redacted)
		add(u.User.Username())
		if p, ok := u.User.Password(); ok {
			add(p)
			add(url.QueryEscape(p))
		}
	}
	segs := strings.Split(u.EscapedPath(), "/")
	for i, seg := range segs {
		if secretSegment(seg) {
			add(seg)
			segs[i] = secret.Redacted
		}
	}
	redPath := strings.Join(segs, "/")
	if u.RawQuery != "" {
		add(u.RawQuery)
		for _, part := range strings.Split(u.RawQuery, "&") {
			if _, v, ok := strings.Cut(part, "="); ok {
				add(v)
			}
		}
	}
	if u.Fragment != "" {
		add(u.EscapedFragment())
		add(u.Fragment)
	}
	s := red.Scheme + "://"
	if red.User != nil {
		s += secret.Redacted + "@"
	}
	s += red.Host + redPath
	if u.RawQuery != "" || u.ForceQuery {
		s += "?" + secret.Redacted
	}
	if u.Fragment != "" {
		s += "#" + secret.Redacted
	}
	seen := map[string]bool{}
	for _, f := range []string{raw, u.String(), u.Redacted(), stripPassword(u)} {
		if f != "" && !seen[f] {
			seen[f] = true
			forms = append(forms, [2]string{f, s})
		}
	}
	sort.Slice(forms, func(i, j int) bool { return len(forms[i][0]) > len(forms[j][0]) })
	sortLongestFirst(parts)
	return forms, parts
}

// unescape returns f(v), or "" when it fails.
func unescape(f func(string) (string, error), v string) string {
	d, err := f(v)
	if err != nil {
		return ""
	}
	return d
}

// stripPassword is the URL as net/http quotes it in a *url.Error ("user:***@host").
func stripPassword(u *url.URL) string {
	if _, ok := u.User.Password(); !ok {
		return ""
	}
	c := *u
	c.User = url.UserPassword(u.User.Username(), "***")
	return c.String()
}

// secretSegment: a URL path segment that looks like a credential rather than a route: 16
// bytes or more, or 8 or more with a digit ("/v1/sk-4f9a…/mcp").
func secretSegment(seg string) bool {
	return len(seg) >= 16 || len(seg) >= 8 && strings.ContainsAny(seg, "0123456789")
}

// Unwrap returns the cause.
func (e *ServerError) Unwrap() error { return e.Err }

// Discover lists the tools of every server by starting it (stdio: command, args, cwd, env) or
// connecting to it (its mcpconfig.Server.Reach: httpUrl, or url — SSE when type is "sse",
// else streamable HTTP; a server without transport keys by its command or URL) with the
// official MCP Go SDK, then paging
// through tools/list. Servers are handled Parallel at a time, each within Timeout. A server
// that fails is returned as a *ServerError (sorted by server key) and left out of the
// inventory; the others go on. Tools get SourceDiscovered and the server's trust flag.
//
// Tool names are kept exactly as listed, including names that the MCP spec's name rules
// reject (dots are allowed, CJK is not): those are the names the audit is about.
func Discover(ctx context.Context, servers []mcpconfig.Server, opts DiscoverOptions) (*mcpinventory.Inventory, []*ServerError) {
	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	type result struct {
		tools []string
		proc  *stdioProc
		err   error
	}
	results := make([]result, len(servers))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if why := s.StartRefusal(); why != "" && !opts.AllowUntrusted {
				// Not started: its command would run as this process (issue 30 finding 1).
				results[i] = result{err: &UntrustedError{Reason: why}}
				return
			}
			sem <- struct{}{}
			defer func() { <-sem }()
			tools, proc, err := listTools(ctx, s, opts)
			results[i] = result{tools, proc, err}
		}()
	}
	wg.Wait()

	inv := mcpinventory.New()
	var errs []*ServerError
	for i, s := range servers {
		if results[i].err != nil {
			errs = append(errs, newServerError(s, results[i].err, results[i].proc, opts.Env))
			continue
		}
		inv.Add(s.Key, s.Trust, mcpinventory.SourceDiscovered, results[i].tools...)
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Server < errs[j].Server })
	return inv, errs
}

// listTools connects to one server and returns every tool name of every tools/list page; for a
// stdio server also the started process (its exit status and stderr tail, for the error).
func listTools(ctx context.Context, s mcpconfig.Server, opts DiscoverOptions) ([]string, *stdioProc, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	transport, proc, err := newTransport(ctx, s, opts)
	if err != nil {
		return nil, nil, err
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
		// The SDK closed the connection (the process was waited for) unless it never started.
		return nil, proc, fmt.Errorf("connect: %w", contextCause(ctx, err))
	}
	var tools []string
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			_ = session.Close() // waits for the process: its exit status and stderr are complete
			return nil, proc, fmt.Errorf("list tools: %w", contextCause(ctx, err))
		}
		tools = append(tools, tool.Name)
	}
	_ = session.Close()
	return tools, proc, nil
}

// contextCause makes a timeout recognizable (errors.Is(err, context.DeadlineExceeded)) even
// when the SDK reports it as a closed connection.
func contextCause(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%w (%v)", ctxErr, err)
	}
	return err
}

func newTransport(ctx context.Context, s mcpconfig.Server, opts DiscoverOptions) (mcp.Transport, *stdioProc, error) {
	switch s.Reach() {
	case mcpconfig.TransportStdio:
		return stdioTransport(ctx, s, opts)
	case mcpconfig.TransportHTTP:
		return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: httpClient(s, opts),
			MaxRetries: -1, DisableStandaloneSSE: true}, nil, nil
	case mcpconfig.TransportSSE:
		return &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: httpClient(s, opts)}, nil, nil
	default:
		return nil, nil, ErrNoTransport
	}
}

// stdioProc is a started stdio server: its command and the tail of its stderr.
type stdioProc struct {
	cmd    *exec.Cmd
	stderr *tailBuffer
}

// exit says how the process ended ("exit status 3", "signal: killed"), "" when it did not
// start or has not been waited for.
func (p *stdioProc) exit() string {
	if p.cmd.ProcessState == nil {
		return ""
	}
	return p.cmd.ProcessState.String()
}

// tailBuffer keeps the last stderrTailBytes written to it (safe for concurrent use).
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

// Write keeps the tail of p.
func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - stderrTailBytes; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// lines returns the last n non-empty lines, trimmed.
func (b *tailBuffer) lines(n int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range strings.Split(string(b.buf), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

func stdioTransport(ctx context.Context, s mcpconfig.Server, opts DiscoverOptions) (mcp.Transport, *stdioProc, error) {
	env := mcpconfig.Env{}
	for k, v := range opts.Env {
		env[k] = v
	}
	for k, v := range s.Env {
		env[k] = v.Reveal()
	}
	path, err := lookPath(s.Command, env["PATH"], s.Cwd)
	if err != nil {
		return nil, nil, fmt.Errorf("start %q: %w", s.Command, err)
	}
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = a.Reveal()
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env.List()
	cmd.Dir = s.Cwd
	tail := &tailBuffer{}
	cmd.Stderr = tail
	if opts.Stderr != nil {
		cmd.Stderr = io.MultiWriter(tail, opts.Stderr)
	}
	cmd.WaitDelay = time.Second
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, &stdioProc{cmd: cmd, stderr: tail}, nil
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
func httpClient(s mcpconfig.Server, opts DiscoverOptions) *http.Client {
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
	headers map[string]secret.Secret
}

// RoundTrip sets the configured headers on a copy of req and sends it.
func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v.Reveal())
	}
	return t.base.RoundTrip(req)
}

// AllFailed is the error of a discovery where not one of n servers (n > 0) could be listed
// (errs: Discover's): every command that discovers refuses to go on (exit 1, nothing planned
// or reported: an inventory of nothing would make every result wrong), with each server's
// cause. nil when n is 0 or some server answered.
func AllFailed(n int, errs []*ServerError) error {
	if n == 0 || len(errs) < n {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	s := "s"
	if n == 1 {
		s = ""
	}
	return fmt.Errorf("--discover: none of the %d MCP server%s could be listed (nothing was done):\n  %s", n, s, strings.Join(msgs, "\n  "))
}

// Lister returns Discover with opts as a tool lister for a caller below this package (an agent
// room's audit, which never starts a server itself): serverErrs are Discover's *ServerErrors,
// err is AllFailed's when not one of the servers could be listed (then inv is nil).
func Lister(opts DiscoverOptions) func(ctx context.Context, servers []mcpconfig.Server) (inv *mcpinventory.Inventory, serverErrs []error, err error) {
	return func(ctx context.Context, servers []mcpconfig.Server) (*mcpinventory.Inventory, []error, error) {
		inv, errs := Discover(ctx, servers, opts)
		if err := AllFailed(len(servers), errs); err != nil {
			return nil, nil, err
		}
		serverErrs := make([]error, len(errs))
		for i, e := range errs {
			serverErrs[i] = e
		}
		return inv, serverErrs, nil
	}
}
