package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"
)

// TestHelpEveryCommand runs `--help` of the app and of every command and subcommand the app
// defines (walked from newApp, so a new command is covered without a line here): exit 0,
// nothing on stderr, every name of every flag of that command spelled in the text (--name, or
// -n for a one-letter alias), an EXIT STATUS block, and the whole text equal to its golden file
// testdata/golden/help/<command path>.txt (go test ./cmd/sessionfix -update rewrites them).
// `sessionfix help CMD` gives the same text as `CMD --help`.
func TestHelpEveryCommand(t *testing.T) {
	env := testEnv(t)
	type entry struct {
		path  []string
		flags []cli.Flag
	}
	app := newApp(env)
	list := []entry{{nil, app.Flags}}
	var walk func(parent []string, cmds []*cli.Command)
	walk = func(parent []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := append(append([]string(nil), parent...), c.Name)
			list = append(list, entry{p, c.Flags})
			walk(p, c.Subcommands)
		}
	}
	walk(nil, app.Commands)
	require.Greater(t, len(list), 5, "the app has its commands")
	seen := map[string]bool{}
	for _, e := range list {
		name := "sessionfix"
		if len(e.path) > 0 {
			name = strings.Join(e.path, "-")
		}
		seen[name+".txt"] = true
		t.Run(name, func(t *testing.T) {
			r := runCLI(t, env, "", append(append([]string(nil), e.path...), "--help")...)
			require.Equal(t, 0, r.code, "%s --help: exit 0\n%s", name, r.err)
			assert.Empty(t, r.err, "nothing on stderr")
			assert.Contains(t, r.out, "USAGE:")
			if len(e.path) > 0 {
				assert.Contains(t, r.out, "EXIT STATUS:", "%s --help lists its exit codes", name)
			}
			for _, f := range e.flags {
				for _, n := range f.Names() {
					spelled := "--" + n
					if len(n) == 1 {
						spelled = "-" + n
					}
					assert.Contains(t, r.out, spelled, "%s --help mentions flag %s", name, spelled)
				}
			}
			if len(e.path) == 1 {
				h := runCLI(t, env, "", "help", e.path[0])
				assert.Equal(t, r.out, h.out, "help %s is %s --help", e.path[0], e.path[0])
			}
			checkGolden(t, filepath.Join("testdata/golden/help", name+".txt"), r.out)
		})
	}
	// A golden file of a command that no longer exists is stale.
	files, err := filepath.Glob("testdata/golden/help/*.txt")
	require.NoError(t, err)
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			if *update {
				require.NoError(t, os.Remove(f))
				continue
			}
			t.Errorf("%s: no such command any more (go test ./cmd/sessionfix -update removes it)", f)
		}
	}
}

// checkGolden compares got with the golden file path, or writes it with -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: go test ./cmd/sessionfix -update writes it")
	assert.Equal(t, string(want), got, "%s (go test ./cmd/sessionfix -update rewrites it)", path)
}
