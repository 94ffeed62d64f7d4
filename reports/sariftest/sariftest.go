// Package sariftest validates SARIF logs against the OASIS SARIF 2.1.0 JSON schema kept in
// reports/testdata (copied from oasis-tcs/sarif-spec sarif-2.1/schema/sarif-schema-2.1.0.json
// @ e0583813964e). The schema is found beside this package's source, so tests of any package
// can use it whatever their working directory.
//
// Only tests use it.
package sariftest

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

// SchemaPath is the absolute path of the SARIF 2.1.0 schema file.
func SchemaPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "sarif-schema-2.1.0.json")
}

// Schema compiles the SARIF 2.1.0 schema.
func Schema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(SchemaPath())
	require.NoError(t, err)
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("sarif-schema-2.1.0.json", doc))
	sch, err := c.Compile("sarif-schema-2.1.0.json")
	require.NoError(t, err)
	return sch
}

// Validate fails the test unless b is a SARIF 2.1.0 log that the schema accepts.
func Validate(t testing.TB, b []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	require.NoError(t, Schema(t).Validate(v))
}
