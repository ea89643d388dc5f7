package engine_test

import (
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// These helpers open stores and sessions for the tests, through the
// public API (engine.OpenStore and its methods).

// createIn creates a session for cwd in a store with so (see openStore)
// with co.
func createIn(t testing.TB, so engine.StoreOptions, cwd string, co engine.CreateOptions) (*engine.Session, error) {
	t.Helper()
	return openStore(t, so).Create(t.Context(), cwd, co)
}

// inMemory returns a session in memory (pi's inMemory) with so's clock
// and ids.
func inMemory(t testing.TB, cwd string, so engine.StoreOptions) *engine.Session {
	t.Helper()
	s, err := createIn(t, so, cwd, engine.CreateOptions{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// raw decodes the JSON of a message, for tests that hold messages as
// JSON.
func raw[T ~string | ~[]byte](s T) message.Message {
	m, err := message.Decode([]byte(s))
	if err != nil {
		panic("raw: " + err.Error())
	}
	return m
}

// infoOf returns the listing fields of the session file at path
// (Store.Info), nil when it is not listed.
func infoOf(t testing.TB, path string) *engine.Info {
	t.Helper()
	info, err := openStore(t, engine.StoreOptions{}).Info(t.Context(), path)
	if err != nil {
		return nil
	}
	return info
}
