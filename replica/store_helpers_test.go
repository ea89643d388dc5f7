package replica_test

import (
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// openStore opens an engine store with o, on a new temporary directory
// when o.Dir and o.AgentDir are both "".
func openStore(t testing.TB, o engine.StoreOptions) *engine.Store {
	t.Helper()
	if o.Dir == "" && o.AgentDir == "" {
		o.Dir = t.TempDir()
	}
	st, err := engine.OpenStore(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// rawMessage decodes the JSON of a message.
func rawMessage(s string) message.Message {
	m, err := message.Decode([]byte(s))
	if err != nil {
		panic("rawMessage: " + err.Error())
	}
	return m
}
