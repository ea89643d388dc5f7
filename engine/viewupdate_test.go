package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
)

// viewLines is a session file's header and n user messages, each a child
// of the one before, from id e<from>.
func grownLines(header bool, from, n int) []byte {
	var b bytes.Buffer
	if header {
		b.WriteString(`{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n")
	}
	for i := from; i < from+n; i++ {
		parent := "null"
		if i > 0 {
			parent = fmt.Sprintf(`"e%07d"`, i-1)
		}
		fmt.Fprintf(&b, `{"type":"message","id":"e%07d","parentId":%s,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hello %d","timestamp":1}}`+"\n", i, parent, i)
	}
	return b.Bytes()
}

// TestViewUpdate: a View reads on what is appended to its file (only
// complete lines; a line being written is read by the next Update),
// indexes it, and reads its lines back like the others; a file rewritten
// or replaced since is ErrStale; malformed lines are counted.
func TestViewUpdate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no file identity to prove a grown file the same")
	}
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, append(grownLines(true, 0, 5), "not json\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, engine.StoreOptions{NoOffsetIndex: true})
	v, err := st.View(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.Malformed() != 1 || !v.Lean() || v.Len() != 5 {
		t.Fatalf("malformed %d, lean %v, %d entries", v.Malformed(), v.Lean(), v.Len())
	}
	if got, err := v.Update(); err != nil || len(got) != 0 {
		t.Fatalf("Update of an unchanged file: %d entries, %v", len(got), err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	more := grownLines(false, 5, 3)
	cut := len(more) - 20 // the last line half written
	if _, err := f.Write(append([]byte("also not json\n"), more[:cut]...)); err != nil {
		t.Fatal(err)
	}
	got, err := v.Update()
	if err != nil || len(got) != 2 || got[0].ID != "e0000005" || got[1].ID != "e0000006" {
		t.Fatalf("Update: %v, %v; want e0000005 and e0000006", got, err)
	}
	if _, err := f.Write(more[cut:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err = v.Update()
	if err != nil || len(got) != 1 || got[0].ID != "e0000007" {
		t.Fatalf("Update after the line's end: %v, %v", got, err)
	}
	if leaf, _ := v.LeafID(); leaf != "e0000007" || v.Len() != 8 || v.Malformed() != 2 {
		t.Errorf("after Update: leaf %s, %d entries, %d malformed", leaf, v.Len(), v.Malformed())
	}
	// The appended entries read back as the others, at their place.
	branch := v.BranchPath("")
	var texts []string
	for e, err := range v.Lines(branch) {
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(e.Raw))
	}
	if len(texts) != 8 || !bytes.Contains([]byte(texts[7]), []byte(`"hello 7"`)) || !bytes.Contains([]byte(texts[5]), []byte(`"hello 5"`)) {
		t.Errorf("lines read back: %q", texts)
	}
	// The same as a new View says.
	w, err := st.View(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(viewStateOf(t, w, []string{"e0000003", "e0000006"}), viewStateOf(t, v, []string{"e0000003", "e0000006"})); diff != "" || w.Malformed() != v.Malformed() {
		t.Errorf("an updated View and a new one differ (-new +updated):\n%s", diff)
	}
	w.Close()

	// Rewritten in place before where the View stopped, then grown: stale.
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(bytes.Replace(data, []byte(`"hello 7"`), []byte(`"jello 7"`), 1), grownLines(false, 8, 1)...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Update(); !errors.Is(err, engine.ErrStale) {
		t.Errorf("Update of a file rewritten in place: %v", err)
	}
	// Replaced by a longer file: stale.
	v, err = st.View(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	data, _ = os.ReadFile(p)
	if err := os.WriteFile(p+".new", append(data, grownLines(false, 9, 1)...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Update(); !errors.Is(err, engine.ErrStale) {
		t.Errorf("Update of a replaced file: %v", err)
	}
}

// TestViewWithKeepBelow: a file smaller than KeepBelow keeps its
// messages' bytes (and Update keeps those of appended ones); a larger
// one does not.
func TestViewWithKeepBelow(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	data := grownLines(true, 0, 5)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, engine.StoreOptions{NoOffsetIndex: true})
	for _, c := range []struct {
		keepBelow int64
		kept      bool
	}{{0, false}, {int64(len(data)), false}, {int64(len(data)) + 1, true}} {
		v, err := st.ViewWith(ctx, p, engine.ViewOptions{KeepBelow: c.keepBelow})
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Entries()[2].Raw != nil; got != c.kept || v.Lean() == c.kept {
			t.Errorf("KeepBelow %d: bytes kept %v, lean %v", c.keepBelow, got, v.Lean())
		}
		v.Close()
	}
}
