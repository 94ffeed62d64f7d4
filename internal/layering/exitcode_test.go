package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exitConst is the name of a constant that would be an exit status: exitPartial, ExitInUse.
var exitConst = regexp.MustCompile(`^[eE]xit[A-Z]`)

// TestExitCodesInOnePlace: the exit statuses are internal/exitcode's table, nowhere else
// (issue 24 item 4: they were declared in cmd/sessionfix/app.go, pipeline/exit.go,
// pipeline/fixrun.go and pipeline/summary.go). internal/exitcode imports nothing of the module,
// so every package may return its codes; no other production file declares a constant named
// exit…/Exit… (a second table would drift from the help and docs/exit-codes.md).
func TestExitCodesInOnePlace(t *testing.T) {
	all := imports(t)
	require.Contains(t, all, "internal/exitcode")
	for _, imp := range all["internal/exitcode"] {
		assert.False(t, strings.HasPrefix(imp, module), "internal/exitcode imports %s: it must stay a leaf of the module", imp)
	}
	root := "../.."
	fset := token.NewFileSet()
	found := 0
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "fixtures" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if filepath.ToSlash(filepath.Dir(rel)) == "internal/exitcode" {
						found++
						continue
					}
					assert.False(t, exitConst.MatchString(n.Name), "%s: const %s: exit statuses are internal/exitcode's (one table)", fset.Position(n.Pos()), n.Name)
				}
			}
		}
		return nil
	}))
	assert.NotZero(t, found, "internal/exitcode declares the codes")
}
