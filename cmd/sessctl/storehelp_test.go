package main

import (
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// openStore opens a store with o: pi's store as the environment names it
// (the tests set PI_CODING_AGENT_DIR) when o.Dir and o.AgentDir are "".
func openStore(t testing.TB, o engine.StoreOptions) *engine.Store {
	t.Helper()
	st, err := engine.OpenStore(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// rawMessage decodes the JSON of a message.
func rawMessage[T ~string | ~[]byte](s T) message.Message {
	m, err := message.Decode([]byte(s))
	if err != nil {
		panic("rawMessage: " + err.Error())
	}
	return m
}

// leafEntry returns the entry the session's leaf names.
func leafEntry(s *engine.Session) (*engine.Entry, bool) {
	id, ok := s.LeafID()
	if !ok {
		return nil, false
	}
	return s.Entry(id)
}
