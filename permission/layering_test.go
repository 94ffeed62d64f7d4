package permission_test

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

// TestImportsStayInward checks permission's layering rule: non-test files of
// permission and permission/permissiontest import the standard library, mcpname and
// permission only.
func TestImportsStayInward(t *testing.T) {
	const module = "github.com/sessionfix/sessionfix/"
	allowed := map[string]bool{module + "mcpname": true, module + "permission": true}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	more, err := filepath.Glob("permissiontest/*.go")
	require.NoError(t, err)
	files = append(files, more...)
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			if strings.Contains(strings.SplitN(path, "/", 2)[0], ".") {
				assert.True(t, allowed[path], "%s imports %s", name, path)
			}
		}
		checked++
	}
	assert.GreaterOrEqual(t, checked, 8, "non-test files inspected")
}
