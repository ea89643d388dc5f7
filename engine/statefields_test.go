package engine_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
)

// topKeys returns the top-level keys of a JSON object, in order.
func topKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestStateFields checks that StateFields names exactly the fields
// WriteState writes, in order, for each set of options.
func TestStateFields(t *testing.T) {
	s := engine.InMemory("/home/dev/p", engine.Options{})
	defer s.Close()
	if _, err := s.AppendMessage(json.RawMessage(`{"role":"user","content":"hi","timestamp":1}`)); err != nil {
		t.Fatal(err)
	}
	for _, o := range []engine.StateOptions{{}, {ContextByLeaf: true}, {NoInfo: true}, {ContextByLeaf: true, NoInfo: true}} {
		var buf bytes.Buffer
		if err := s.WriteState(&buf, o); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(engine.StateFields(o), topKeys(t, buf.Bytes())); diff != "" {
			t.Errorf("options %+v: StateFields differs from WriteState's keys (-StateFields +written):\n%s", o, diff)
		}
	}
}
