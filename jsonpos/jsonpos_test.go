package jsonpos

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func decodeErr(doc string, v any) error {
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func TestAt(t *testing.T) {
	var v struct {
		ID  string `json:"id"`
		Max int    `json:"max"`
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"missing comma: the next key", "{\n  \"id\": \"a\"\n  \"max\": 1\n}\n", ":3:3"},
		{"wrong type: the value's last byte", "{\n  \"max\": \"64\"\n}", ":2:13"},
		{"cut short: the last byte", "{\n \"id\": \"a\"", ":2:10"},
		{"bad first byte", "x", ":1:1"},
		{"unknown member: no offset", "{\"idd\": 1}", ""},
	} {
		err := decodeErr(tc.doc, &v)
		assert.Error(t, err, tc.name)
		assert.Equal(t, tc.want, At([]byte(tc.doc), err), tc.name)
	}
	assert.Equal(t, "", At([]byte("{}"), errors.New("other")))
	// Unmarshal's cut document is a SyntaxError at the end.
	err := json.Unmarshal([]byte("[1,"), &[]int{})
	assert.Equal(t, ":1:3", At([]byte("[1,"), err))
}
