package reports_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImportsStayInward checks reports' layering rule: the non-test files of reports and
// reports/htmltest import the standard library only, plus go-runewidth (display width) and
// go-sarif (the SARIF 2.1.0 writer).
func TestImportsStayInward(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	more, err := filepath.Glob("htmltest/*.go")
	require.NoError(t, err)
	checked := 0
	for _, name := range append(files, more...) {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			if path == "github.com/mattn/go-runewidth" || path == "github.com/owenrumney/go-sarif/v2/sarif" {
				continue
			}
			assert.False(t, strings.Contains(strings.SplitN(path, "/", 2)[0], "."), "%s imports %s", name, path)
		}
		checked++
	}
	assert.Equal(t, 5, checked, "table.go, html.go, sarif.go, sarifid.go, htmltest.go")
}
