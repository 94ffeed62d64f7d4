package citations

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	// codeSpan is a `code span` of a Markdown file.
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// goRef is a package-qualified Go name: pkg.Name, pkg.Type.Member, optionally called.
	goRef = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Za-z][A-Za-z0-9_]*))?(?:\(.*\))?$`)
	// repoPath is a path into the repository (a top-level folder of it first), optionally
	// followed by .Name (a declaration of that package) and call arguments.
	repoPath = regexp.MustCompile(`^((?:cmd|store|rewrite|internal|pipeline|scan|audit|check|naming|mcpname|inventory|permission|provider|reports|fixtures|scripts|docs)/[A-Za-z0-9_./-]*)(?:\(.*\))?$`)
	// placeholder is a path segment that stands for any name (NAME, DIR, <agent>, …).
	placeholder = regexp.MustCompile(`(^|/)([A-Z]{2,}|[^/]*[<>*…][^/]*)(/|$|\.)`)
)

// declared returns, per package directory (relative to root) and per package name, the names
// its non-test Go files declare: top-level functions, types, variables and constants, methods,
// struct fields and interface methods.
func declared(t *testing.T) (byDir, byPkg map[string]map[string]bool) {
	t.Helper()
	byDir, byPkg = map[string]map[string]bool{}, map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "fixtures") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		dir, pkg := filepath.ToSlash(rel), f.Name.Name
		if byDir[dir] == nil {
			byDir[dir] = map[string]bool{}
		}
		if byPkg[pkg] == nil {
			byPkg[pkg] = map[string]bool{}
		}
		add := func(name string) { byDir[dir][name], byPkg[pkg][name] = true, true }
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				add(n.Name.Name)
			case *ast.TypeSpec:
				add(n.Name.Name)
			case *ast.ValueSpec:
				for _, id := range n.Names {
					add(id.Name)
				}
			case *ast.Field:
				for _, id := range n.Names {
					add(id.Name)
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	return byDir, byPkg
}

// TestDocsNameWhatExists: every repository path and every package-qualified Go name that a
// document in docs/ gives as code (`engine/jsonl/store.go`, `internal/fileio.RewriteFile`,
// `all.DefaultRoots`, `agent.Agent.Classes`) exists: the file or folder, the declaration in
// that package (a member after the type: any field or method name of the package). Names of
// packages outside the module (`os.Args`) and placeholders (`agent/<agent>/`, `NAME`) are
// not checked.
func TestDocsNameWhatExists(t *testing.T) {
	byDir, byPkg := declared(t)
	require.NotEmpty(t, byPkg["rewrite"], "the module's packages were read")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, docs)
	checked := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		name := filepath.Base(doc)
		for _, m := range codeSpan.FindAllStringSubmatch(string(b), -1) {
			span := strings.TrimSpace(m[1])
			if g := goRef.FindStringSubmatch(span); g != nil {
				names, ok := byPkg[g[1]]
				if !ok {
					continue // not a package of this module
				}
				checked++
				assert.True(t, names[g[2]], "%s: `%s`: package %s declares no %s", name, span, g[1], g[2])
				if g[3] != "" {
					assert.True(t, names[g[3]], "%s: `%s`: package %s declares no member %s", name, span, g[1], g[3])
				}
				continue
			}
			g := repoPath.FindStringSubmatch(span)
			if g == nil || placeholder.MatchString(g[1]) {
				continue
			}
			checked++
			p := strings.TrimSuffix(g[1], "/")
			if _, err := os.Stat(filepath.Join(root, p)); err == nil {
				continue
			}
			// dir.Name: a declaration of the package in dir.
			i := strings.LastIndexByte(p, '.')
			if i > 0 && i+1 < len(p) && p[i+1] >= 'A' && p[i+1] <= 'Z' {
				if names, ok := byDir[p[:i]]; ok {
					assert.True(t, names[p[i+1:]], "%s: `%s`: %s declares no %s", name, span, p[:i], p[i+1:])
					continue
				}
			}
			assert.Fail(t, "no such path", "%s: `%s` names no file or folder of the repository", name, span)
		}
	}
	assert.Greater(t, checked, 50, "references checked")
	t.Logf("%d references checked in %d documents", checked, len(docs))
}
