package jsonl

import "testing"

// TestStartInAfterBytes: an object started at the end of a buffer that
// already holds bytes (StartIn's purpose: many objects in one block) gets
// no comma before its first member.
func TestStartInAfterBytes(t *testing.T) {
	t.Parallel()
	var b ObjectBuilder
	buf := []byte(`{"a":1}` + "\n")
	got := string(b.StartIn(buf).String("k", "v").Number("n", 2).Bytes())
	if want := `{"a":1}` + "\n" + `{"k":"v","n":2}`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := string(b.StartIn(nil).Bytes()); got != "{}" {
		t.Errorf("empty object %q", got)
	}
	if got := string(NewObject(0).Raw("x", []byte("[]")).Bytes()); got != `{"x":[]}` {
		t.Errorf("got %q", got)
	}
}
