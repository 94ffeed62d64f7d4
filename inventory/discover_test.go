package inventory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/qwen/settings"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpinventory"
)

// The test binary doubles as a stdio MCP server: when fakeModeEnv is set, TestMain runs the
// server instead of the tests (the helper-process pattern of os/exec's own tests).
const (
	fakeModeEnv  = "SESSIONFIX_FAKE_MCP"   // serve | hang | crash | leak
	fakeToolsEnv = "SESSIONFIX_FAKE_TOOLS" // JSON array of tool names
	fakePageEnv  = "SESSIONFIX_FAKE_PAGE"  // tools/list page size
)

func TestMain(m *testing.M) {
	switch os.Getenv(fakeModeEnv) {
	case "":
		os.Exit(m.Run())
	case "serve":
		if err := serveFake(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "hang":
		// Read requests and never answer.
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "crash":
		fmt.Fprintln(os.Stderr, "fake server: exiting on purpose")
		os.Exit(3)
	case "leak":
		// A server that prints its configuration before dying, as many do.
		for i := 1; i <= 8; i++ {
			fmt.Fprintf(os.Stderr, "noise line %d\n", i)
		}
		fmt.Fprintf(os.Stderr, "env API_TOKEN=%s\n", os.Getenv("API_TOKEN"))
		fmt.Fprintf(os.Stderr, "args %s\n", strings.Join(os.Args[1:], " "))
		fmt.Fprintf(os.Stderr, "parent GITHUB_TOKEN=%s\n", os.Getenv("GITHUB_TOKEN"))
		fmt.Fprintln(os.Stderr, "fatal: cannot reach the backend")
		os.Exit(5)
	}
}

func serveFake() error {
	var tools []string
	if err := json.Unmarshal([]byte(os.Getenv(fakeToolsEnv)), &tools); err != nil {
		return fmt.Errorf("fake server: %s: %w", fakeToolsEnv, err)
	}
	page, _ := strconv.Atoi(os.Getenv(fakePageEnv))
	srv := fakeServer(tools, page)
	return srv.Run(context.Background(), &mcp.StdioTransport{})
}

func fakeServer(tools []string, pageSize int) *mcp.Server {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"},
		&mcp.ServerOptions{PageSize: pageSize, Logger: quiet})
	for _, name := range tools {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	return srv
}

// testBinary is the path of this test binary, to start it as a server.
func testBinary(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}

// loadServers writes a settings file and returns its servers, as the CLI gets them.
func loadServers(t testing.TB, content string, env settings.Env) []mcpconfig.Server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "settings.json")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	f, err := settings.Load(path, settings.ScopeUser, env)
	require.NoError(t, err)
	return settings.Servers(f.MCPServers)
}

func jsonString(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

var oddTools = []string{"literature.search_pubmed", "literature_search_pubmed", "get+data",
	"get_data_for_a_specific_location_and_date_range_extended", "搜索文献", "ok_tool", "deploy.prod"}

func TestDiscoverStdio(t *testing.T) {
	exe := testBinary(t)
	content := fmt.Sprintf(`{"mcpServers": {
  "lit": {"command": %[1]s, "trust": true,
          "env": {%[2]q: "serve", %[3]q: "$TOOLSET", %[4]q: "2"}},
  "foo.bar": {"command": %[1]s, "args": ["--ignored-by-the-fake"],
          "env": {%[2]q: "serve", %[3]q: "[\"get_data\", \"deploy.prod\"]"}},
  "crashes": {"command": %[1]s, "env": {%[2]q: "crash"}},
  "missing": {"command": "no-such-mcp-server-for-sessionfix"},
  "tcp-only": {"tcp": "localhost:9"}
}}`, jsonString(t, exe), fakeModeEnv, fakeToolsEnv, fakePageEnv)
	// The parent environment is injected: TOOLSET reaches the server only through the
	// settings' "$TOOLSET" expansion; PATH is an empty directory, so "missing" cannot be
	// found on this machine's PATH by accident.
	parent := settings.Env{"TOOLSET": jsonString(t, oddTools), "PATH": t.TempDir()}
	servers := loadServers(t, content, parent)

	inv, errs := Discover(context.Background(), servers, DiscoverOptions{Env: parent, Timeout: time.Minute})

	assert.Equal(t, []string{"foo.bar", "lit"}, inv.Keys())
	lit := inv.Servers["lit"]
	assert.ElementsMatch(t, oddTools, toolNames(lit), "every page of tools/list, names kept byte for byte")
	assert.True(t, lit.Trust)
	assert.Equal(t, mcpinventory.SourceDiscovered, lit.Source)
	for _, tool := range lit.Tools {
		assert.Equal(t, mcpinventory.SourceDiscovered, tool.Source)
	}
	assert.Equal(t, []string{"deploy.prod", "get_data"}, toolNames(inv.Servers["foo.bar"]))

	var failed []string
	for _, e := range errs {
		failed = append(failed, e.Server)
		assert.Contains(t, e.Error(), fmt.Sprintf("discover MCP server %q: ", e.Server))
	}
	require.Equal(t, []string{"crashes", "missing", "tcp-only"}, failed, "sorted by server key")
	assert.Error(t, errs[0].Err)
	assert.ErrorIs(t, errs[1], exec.ErrNotFound)
	assert.ErrorIs(t, errs[2], ErrNoTransport)
}

func TestDiscoverTimeout(t *testing.T) {
	t.Parallel() // most of its time is spent waiting for the timeout
	exe := testBinary(t)
	servers := loadServers(t, fmt.Sprintf(`{"mcpServers": {
  "hangs": {"command": %[1]s, "env": {%[2]q: "hang"}},
  "answers": {"command": %[1]s, "env": {%[2]q: "serve", %[3]q: "[\"ok\"]"}}
}}`, jsonString(t, exe), fakeModeEnv, fakeToolsEnv), nil)

	// The timeout is per server: the one that never answers fails, the other is listed.
	inv, errs := Discover(context.Background(), servers, DiscoverOptions{Timeout: 2 * time.Second})
	assert.Equal(t, []string{"answers"}, inv.Keys())
	require.Len(t, errs, 1)
	assert.Equal(t, "hangs", errs[0].Server)
	assert.ErrorIs(t, errs[0], context.DeadlineExceeded)
}

func TestDiscoverHTTP(t *testing.T) {
	const token = "Bearer HEADER-SECRET-VALUE"
	srv := fakeServer([]string{"query.documents", "列表"}, 1)
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	requireAuth := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != token {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", requireAuth(streamable))
	mux.Handle("/sse", requireAuth(sse))
	ts := httptest.NewServer(mux)
	defer ts.Close()

	content := fmt.Sprintf(`{"mcpServers": {
  "http": {"httpUrl": %[1]q, "headers": {"Authorization": "$AUTH"}},
  "url-default-http": {"url": %[1]q, "headers": {"Authorization": "$AUTH"}},
  "sse": {"url": %[2]q, "type": "sse", "headers": {"Authorization": "$AUTH"}},
  "no-header": {"httpUrl": %[1]q}
}}`, ts.URL+"/mcp", ts.URL+"/sse")
	servers := loadServers(t, content, settings.Env{"AUTH": token})

	inv, errs := Discover(context.Background(), servers, DiscoverOptions{Timeout: 10 * time.Second})
	assert.Equal(t, []string{"http", "sse", "url-default-http"}, inv.Keys())
	for _, k := range inv.Keys() {
		assert.Equal(t, []string{"query.documents", "列表"}, toolNames(inv.Servers[k]), k)
	}
	require.Len(t, errs, 1)
	assert.Equal(t, "no-header", errs[0].Server)
	for _, e := range errs {
		assert.NotContains(t, e.Error(), "HEADER-SECRET-VALUE")
	}
}

func TestDiscoverRespectsCancellation(t *testing.T) {
	exe := testBinary(t)
	servers := loadServers(t, fmt.Sprintf(`{"mcpServers": {"hangs": {"command": %s, "env": {%q: "hang"}}}}`,
		jsonString(t, exe), fakeModeEnv), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	inv, errs := Discover(ctx, servers, DiscoverOptions{Timeout: time.Hour})
	assert.Empty(t, inv.Keys())
	require.Len(t, errs, 1)
	assert.True(t, errors.Is(errs[0], context.Canceled), "got %v", errs[0])
}

// TestDiscoverPythonFake runs the Python server the real fixtures were recorded with. It is
// skipped when python3 is missing, except with CI=true (.ci/run installs python3): then it fails.
func TestDiscoverPythonFake(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but python3 is not on PATH: .ci/run should have installed it (apt-get install python3)")
		}
		t.Skip("python3 not found, so the recorded fake MCP server is not run (apt-get install python3 to run this test)")
	}
	script, err := filepath.Abs("testdata/fake_mcp.py")
	require.NoError(t, err)
	servers := loadServers(t, fmt.Sprintf(`{"mcpServers": {
  "lit": {"command": %[1]q, "args": [%[2]q]},
  "foo.bar": {"command": %[1]q, "args": [%[2]q], "env": {"TOOLS": "get_data,deploy.prod"}}
}}`, python, script), nil)

	inv, errs := Discover(context.Background(), servers, DiscoverOptions{Timeout: 10 * time.Second})
	require.Empty(t, errs)
	assert.ElementsMatch(t, []string{"literature.search_pubmed", "literature_search_pubmed", "get+data",
		"get_data_for_a_specific_location_and_date_range_extended", "搜索文献", "ok_tool"}, toolNames(inv.Servers["lit"]))
	assert.Equal(t, []string{"deploy.prod", "get_data"}, toolNames(inv.Servers["foo.bar"]))
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "srv")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data"), nil, 0o644))

	tests := []struct {
		name, command, path, dir, want string
		err                            error
	}{
		{"bare name on the child's PATH", "srv", "/nowhere" + string(os.PathListSeparator) + dir, "", bin, nil},
		{"bare name not on PATH", "srv", "/nowhere", "", "", exec.ErrNotFound},
		{"absolute path", bin, "", "", bin, nil},
		{"relative to cwd", "./srv", "", dir, filepath.Join(dir, "srv"), nil},
		{"not executable", "data", dir, "", "", exec.ErrNotFound},
		{"empty command", "", dir, "", "", exec.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lookPath(tt.command, tt.path, tt.dir)
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestServerErrorRedactsURLSecrets(t *testing.T) {
	raw := "http://u:P4ss%21@127.0.0.1:9/mcp?token=QUERYSECRET-000&api_key=a%2Fb&x="
	e := newServerError(mcpconfig.Server{Key: "s", URL: raw}, errors.New(`Post "`+raw+`": dial tcp: refused (token QUERYSECRET-000, key a/b, pass P4ss!)`), nil, nil)
	msg := e.Error()
	for _, secret := range []string{"QUERYSECRET-000", "a%2Fb", "a/b", "P4ss!", "P4ss%21"} {
		assert.NotContains(t, msg, secret)
	}
	assert.Contains(t, msg, "[redacted]")
	assert.Contains(t, msg, `discover MCP server "s"`)
}

// TestServerErrorRedactsEveryURLPart: issue 9 item 9. The user name (a token used as user),
// a token in the path and the fragment are redacted too, wherever the cause quotes them; the
// host and plain route segments stay, so the server can be recognised.
func TestServerErrorRedactsEveryURLPart(t *testing.T) {
	raw := "https://ghp_USERTOKEN0123456789@mcp.example.com/v1/sk-PATHTOKEN42/mcp#frag-SECRET-77"
	cause := fmt.Errorf(`Post %q: 401 Unauthorized (user ghp_USERTOKEN0123456789, path /v1/sk-PATHTOKEN42/mcp, fragment frag-SECRET-77)`, raw)
	msg := newServerError(mcpconfig.Server{Key: "gh", URL: raw}, cause, nil, nil).Error()
	for _, secret := range []string{"ghp_USERTOKEN0123456789", "sk-PATHTOKEN42", "frag-SECRET-77"} {
		assert.NotContains(t, msg, secret)
	}
	assert.Contains(t, msg, `Post "https://[redacted]@mcp.example.com/v1/[redacted]/mcp#[redacted]": 401 Unauthorized`)
}

// TestDiscoverFailureNamesCommandExitAndStderr: issue 8 item 12. A stdio server that dies is
// reported with its command, its exit status and the last lines of its stderr, with every
// configured secret (env, secret-looking args, the parent's secret-named variables) redacted.
func TestDiscoverFailureNamesCommandExitAndStderr(t *testing.T) {
	exe := testBinary(t)
	parent := settings.Env{"GITHUB_TOKEN": "gho_PARENTSECRET", "PATH": t.TempDir()}
	servers := loadServers(t, fmt.Sprintf(`{"mcpServers": {
  "leaky": {"command": %[1]s, "args": ["--api-key", "ARGSECRET-1", "--token=ARGSECRET-2", "--verbose"],
            "env": {%[2]q: "leak", "API_TOKEN": "ENVSECRET-3"}},
  "crashes": {"command": %[1]s, "env": {%[2]q: "crash"}}
}}`, jsonString(t, exe), fakeModeEnv), parent)
	_, errs := Discover(context.Background(), servers, DiscoverOptions{Env: parent, Timeout: time.Minute})
	require.Len(t, errs, 2)

	crash := errs[0]
	assert.Equal(t, "crashes", crash.Server)
	assert.Equal(t, exe, crash.Command)
	assert.Equal(t, "exit status 3", crash.Exit)
	assert.Equal(t, []string{"fake server: exiting on purpose"}, crash.Stderr)
	assert.Contains(t, crash.Error(), fmt.Sprintf("; command %q ended with exit status 3; its stderr ended with: fake server: exiting on purpose", exe))

	leak := errs[1]
	assert.Equal(t, "exit status 5", leak.Exit)
	assert.Equal(t, []string{"env API_TOKEN=[redacted]", "args --api-key [redacted] --token=[redacted] --verbose",
		"parent GITHUB_TOKEN=[redacted]", "fatal: cannot reach the backend"}, leak.Stderr[1:], "the last 5 lines, redacted")
	assert.Equal(t, "noise line 8", leak.Stderr[0])
	for _, secret := range []string{"ARGSECRET-1", "ARGSECRET-2", "ENVSECRET-3", "gho_PARENTSECRET"} {
		assert.NotContains(t, leak.Error(), secret)
	}
	assert.True(t, strings.HasSuffix(leak.Error(), "| fatal: cannot reach the backend"), leak.Error())
}

func toolNames(s *mcpinventory.Server) []string {
	var out []string
	for _, t := range s.Tools {
		out = append(out, t.Name)
	}
	return out
}

// TestListerWrapsDiscoverAndAllFailed: the lister an audit room is given reports a --discover
// where no server could be listed as AllFailed's error (no inventory), and no servers as an
// empty inventory without error.
func TestListerWrapsDiscoverAndAllFailed(t *testing.T) {
	list := Lister(DiscoverOptions{ClientName: "sessionfix", ClientVersion: "test"})
	inv, serverErrs, err := list(context.Background(), []mcpconfig.Server{{Key: "tcp-only"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--discover: none of the 1 MCP server could be listed (nothing was done):\n  discover MCP server \"tcp-only\": ")
	assert.Nil(t, inv)
	assert.Nil(t, serverErrs)

	inv, serverErrs, err = list(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, inv.Servers)
	assert.Empty(t, serverErrs)
}
