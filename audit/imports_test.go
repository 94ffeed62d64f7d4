package audit_test

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

// TestImportsStayInward checks audit's layering rule: audit is generic (the
// agents' audits are their rooms' plug-ins), so it imports mcpname, permission and reports of
// the module and no agent room, inventory or store.
func TestImportsStayInward(t *testing.T) {
	const module = "github.com/sessionfix/sessionfix/"
	allowed := map[string]bool{module + "mcpname": true, module + "permission": true, module + "permission/rules": true, module + "reports": true}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			if strings.HasPrefix(path, module) {
				assert.True(t, allowed[path], "%s imports %s", name, path)
			}
		}
		checked++
	}
	assert.GreaterOrEqual(t, checked, 2)
}
