package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// verb is a fmt verb in a usage message's format.
var verb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)

// TestUsageMessagesWrittenOnce: an option check's message is written in one place (issue 24
// item 4: options were validated in four places, "--format must be table or json" four times,
// "--apply and --dry-run contradict each other" twice, …): no format string given to a usage
// error (cmd/sessionfix's usageErrorf, pipeline's usagef, usage.Errorf) appears twice in the
// production code of cmd and the libraries; a shared check is internal/usage's (Format,
// Workers, Apply, QuietVerbose, DiscoverUntrusted, SQLiteOut, FileName). Formats that say
// nothing by themselves ("--%s: %v", "%s": a wrapped error) are not counted. The agent rooms
// (agent/…) are their own owners' and not checked here.
func TestUsageMessagesWrittenOnce(t *testing.T) {
	root := "../.."
	fset := token.NewFileSet()
	at := map[string][]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && p != root && (d.Name() == "testdata" || d.Name() == "fixtures" || strings.HasPrefix(d.Name(), ".") ||
			rel == "agent" || rel == "scripts") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			name := ""
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				if x, ok := fn.X.(*ast.Ident); ok {
					name = x.Name + "." + fn.Sel.Name
				}
			}
			if name != "usageErrorf" && name != "usagef" && name != "usage.Errorf" && !(rel == "internal/usage/checks.go" && name == "Errorf") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			letters := strings.IndexFunc(verb.ReplaceAllString(s, ""), func(r rune) bool { return r >= 'a' && r <= 'z' })
			if letters < 0 {
				return true
			}
			at[s] = append(at[s], fset.Position(lit.Pos()).String())
			return true
		})
		return nil
	}))
	require.NotEmpty(t, at)
	for s, where := range at {
		assert.Len(t, where, 1, "the usage message %q is written %d times (%s): one check in internal/usage", s, len(where), strings.Join(where, ", "))
	}
}
