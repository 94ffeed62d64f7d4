package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/sessionfix/sessionfix/pipeline"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"
)

// The test binary doubles as a stdio MCP server for --discover (audit, and fix --agent codex): with fakeMCPEnv set
// to "serve" it lists the tools named (JSON array) in fakeToolsEnv — without it those of TOOLS
// (a comma list), else fake_mcp.py's default ones, as the stand-in the fixtures' configs name
// does — and exits when stdin closes (the helper-process pattern of os/exec's tests).
const (
	fakeMCPEnv   = "SESSIONFIX_TEST_MCP"
	fakeToolsEnv = "SESSIONFIX_TEST_MCP_TOOLS"
	fakeReadyEnv = "SESSIONFIX_TEST_MCP_READY"
	// fakeClientEnv names a file the "serve" server writes the client's clientInfo to
	// ("<name> <version>", from initialize or a request's _meta), so a test sees what
	// --discover announced.
	fakeClientEnv = "SESSIONFIX_TEST_MCP_CLIENT"
)

func TestMain(m *testing.M) {
	switch os.Getenv(fakeMCPEnv) {
	case "main": // the real command, signal handling included (exit_test.go)
		main()
	case "hang": // a server that never answers: says "ready" on the FIFO named by fakeReadyEnv,
		// then reads its requests until stdin closes
		if err := os.WriteFile(os.Getenv(fakeReadyEnv), []byte("ready\n"), 0); err != nil {
			os.Exit(1)
		}
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "serve":
	default:
		// The tests, or (run as "sessionfix" by a testdata/script/*.txtar) the real command.
		if p := os.Getenv("SESSIONFIX_TEST_PASSWD"); p != "" {
			// A script's own user database for --all-users (scriptuser_test.go): the test
			// binary's only; the command reads /etc/passwd.
			pipeline.PasswdFile = p
		}
		testscript.Main(m, map[string]func(){"sessionfix": main, "asuser": asUserMain})
	}
	var tools []string
	switch list, ok := os.LookupEnv(fakeToolsEnv); {
	case ok:
		if err := json.Unmarshal([]byte(list), &tools); err != nil {
			fmt.Fprintln(os.Stderr, "fake MCP server:", err)
			os.Exit(1)
		}
	case os.Getenv("TOOLS") != "":
		// The convention of the stand-in the fixtures were recorded with (fake_mcp.py, named
		// in their configs): TOOLS is a comma list.
		tools = strings.Split(os.Getenv("TOOLS"), ",")
	default: // fake_mcp.py's own default list
		tools = []string{"literature.search_pubmed", "literature_search_pubmed", "get+data",
			"get_data_for_a_specific_location_and_date_range_extended", "搜索文献", "ok_tool"}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"},
		&mcp.ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if out := os.Getenv(fakeClientEnv); out != "" {
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				var p struct {
					ClientInfo *mcp.Implementation `json:"clientInfo"`
					Meta       struct {
						ClientInfo *mcp.Implementation `json:"io.modelcontextprotocol/clientInfo"`
					} `json:"_meta"`
				}
				if b, err := json.Marshal(req.GetParams()); err == nil && json.Unmarshal(b, &p) == nil {
					if ci := p.ClientInfo; ci != nil || p.Meta.ClientInfo != nil {
						if ci == nil {
							ci = p.Meta.ClientInfo
						}
						_ = os.WriteFile(out, []byte(ci.Name+" "+ci.Version), 0o644)
					}
				}
				return next(ctx, method, req)
			}
		})
	}
	for _, name := range tools {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fake MCP server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// helperProcess is the command running this test binary's helper test name (a process that
// holds a lock or crashes on purpose) with env added to ours. Its TMPDIR is a directory of t's:
// the helper leaves its own temp directories (testscript's, its t.TempDir) behind when it ends
// with os.Exit, and t's cleanup removes them with it.
func helperProcess(t *testing.T, name string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), "TMPDIR="+t.TempDir()), env...)
	return cmd
}
