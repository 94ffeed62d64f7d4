package layering

import (
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

// reImportWord finds the word import in any form (import, imports, imported, importing).
var reImportWord = regexp.MustCompile(`(?i)\bimport(s|ed|ing)?\b`)

// TestPackageCommentsListNoImports (issue 24): a package comment says what the package owns and
// what it is for, never which packages it imports or must not import. Those rules are this
// package's tests; a list in prose can only go stale (the review behind issue 24 found five of
// ten package comments listing imports their package no longer had, or missing ones it had).
// Say where the package sits ("the contract below the rooms", "a leaf"), not what it imports.
func TestPackageCommentsListNoImports(t *testing.T) {
	root := "../.."
	fset := token.NewFileSet()
	n := 0
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
		f, err := parser.ParseFile(fset, p, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Doc == nil {
			return nil
		}
		n++
		for _, c := range f.Doc.List {
			if m := reImportWord.FindString(c.Text); m != "" {
				rel, _ := filepath.Rel(root, p)
				assert.Fail(t, "a package comment lists imports",
					"%s:%d: %q says %q: drop the import list (internal/layering's tests are the rules)",
					filepath.ToSlash(rel), fset.Position(c.Pos()).Line, strings.TrimSpace(strings.TrimPrefix(c.Text, "//")), m)
			}
		}
		return nil
	}))
	require.Greater(t, n, 30, "the walk found the package comments")
}
