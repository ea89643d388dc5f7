package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// TestStoredLines checks that the header and the lines are written as
// stored, one a line, and that a read error ends the output.
func TestStoredLines(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	lines := func(yield func(*engine.Entry, error) bool) {
		if yield(&engine.Entry{Raw: []byte(`{"id":"a"}`)}, nil) {
			yield(nil, boom)
		}
	}
	var b strings.Builder
	if err := StoredLines(&b, []byte(`{"type":"session"}`), lines); !errors.Is(err, boom) {
		t.Errorf("err %v, want the read error", err)
	}
	if want := "{\"type\":\"session\"}\n{\"id\":\"a\"}\n"; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
}
