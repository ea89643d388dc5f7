package search

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/search/internal/textindex"
)

// TestOwnStateV3Rebuilt: an index whose state is a version 3 gob is
// built again on the next search, not an error.
func TestOwnStateV3Rebuilt(t *testing.T) {
	root, _, _ := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	x := openIndex(t, Options{Engine: EngineOwn})
	want := searchAll(t, x, Query{Text: "flaky", Stores: stores})
	st := readOwnStateAt(t, x)
	st.Version = 3
	var b bytes.Buffer
	b.Write(make([]byte, 4))
	if err := gob.NewEncoder(&b).Encode(st); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	binary.LittleEndian.PutUint32(data, crcOf(data[4:]))
	path := filepath.Join(x.ownDir(), ownStateName)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readOwnState(x.fsys(), path); !errors.Is(err, textindex.ErrCorrupt) {
		t.Fatalf("v3 state: %v, want ErrCorrupt", err)
	}
	y := openIndex(t, Options{Engine: EngineOwn, Dir: x.dir})
	if got := searchAll(t, y, Query{Text: "flaky", Stores: stores}); len(got) != len(want) || len(got) == 0 {
		t.Errorf("after a v3 state: %d hits, want %d", len(got), len(want))
	}
	if st := readOwnStateAt(t, y); st.Version != ownVersion {
		t.Errorf("rebuilt state version %d", st.Version)
	}
}
