package render_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/message"
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
// State writes, in order, for each set of options.
func TestStateFields(t *testing.T) {
	t.Parallel()
	st, err := engine.OpenStore(t.Context(), engine.StoreOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(t.Context(), "/home/dev/p", engine.CreateOptions{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.AppendMessage(message.NewUser("hi", time.UnixMilli(1))); err != nil {
		t.Fatal(err)
	}
	for _, o := range []render.StateOptions{{}, {ContextByLeaf: true}, {NoInfo: true}, {ContextByLeaf: true, NoInfo: true}} {
		var buf bytes.Buffer
		if err := render.State(&buf, s, o); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(render.StateFields(o), topKeys(t, buf.Bytes())); diff != "" {
			t.Errorf("options %+v: StateFields differs from State's keys (-StateFields +written):\n%s", o, diff)
		}
	}
}
