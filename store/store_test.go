package store_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// TestSnapshotHasNoUntypedField: every exported field of the Snapshot contract has a concrete
// type (issue 10 item 5: no `Extra any`); what a backend or agent keeps from its scan goes
// through SetState/StateOf.
func TestSnapshotHasNoUntypedField(t *testing.T) {
	ty := reflect.TypeOf(store.Snapshot{})
	for i := range ty.NumField() {
		f := ty.Field(i)
		if f.IsExported() {
			assert.NotEqual(t, reflect.Interface, f.Type.Kind(), "Snapshot.%s is an interface (%s)", f.Name, f.Type)
		}
	}
}

type metaA struct{ ID string }
type metaB struct{ ID string }

// TestSnapshotState: StateOf returns what SetState kept, typed; another type reads as nil; the
// state never reaches JSON.
func TestSnapshotState(t *testing.T) {
	snap := &store.Snapshot{Agent: "x"}
	assert.Nil(t, store.StateOf[metaA](snap))
	store.SetState(snap, &metaA{ID: "thread-1"})
	got := store.StateOf[metaA](snap)
	require.NotNil(t, got)
	assert.Equal(t, "thread-1", got.ID)
	assert.Nil(t, store.StateOf[metaB](snap), "a value of another type is not returned")
	b, err := json.Marshal(snap)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "thread-1")
	store.SetState(snap, &metaB{ID: "b"})
	assert.Nil(t, store.StateOf[metaA](snap), "SetState replaces")
	assert.Equal(t, "b", store.StateOf[metaB](snap).ID)
}
