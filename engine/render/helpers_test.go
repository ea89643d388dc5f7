package render

import (
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// testStore opens a store on dir (a new temporary directory when "")
// that does not fsync.
func testStore(t *testing.T, dir string) *engine.Store {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	st, err := engine.OpenStore(t.Context(), engine.StoreOptions{Dir: dir, Sync: engine.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// raw decodes the JSON of a message.
func raw(s string) message.Message {
	m, err := message.Decode([]byte(s))
	if err != nil {
		panic("raw: " + err.Error())
	}
	return m
}
