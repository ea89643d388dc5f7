package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForkRange: the lines a fork of every entry copies with the kernel
// are found exactly when the file's bytes from the first entry to the
// last are those entries' lines and nothing else (TestForkFileMatchesFork
// checks the bytes of both ways).
func TestForkRange(t *testing.T) {
	t.Parallel()
	head := `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/p"}`
	e := func(id, parent string) string {
		p := `null`
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"` + strings.Repeat("x", 300) + `","timestamp":1}}`
	}
	body := []string{e("a1", ""), e("a2", "a1"), e("a3", "a2")}
	for _, tc := range []struct {
		name  string
		lines []string
		ok    bool
	}{
		{"clean", body, true},
		{"no final newline", body, true},
		{"a blank line between", []string{body[0], "", body[1], body[2]}, false},
		{"a damaged line between", []string{body[0], `{"type":`, body[1], body[2]}, false},
		{"spaces around an entry", []string{body[0], " " + body[1], body[2]}, false},
		{"a CR at a line's end", []string{body[0], body[1] + "\r", body[2]}, false},
	} {
		text := head + "\n" + strings.Join(tc.lines, "\n")
		if tc.name != "no final newline" {
			text += "\n"
		}
		path := filepath.Join(t.TempDir(), "s.jsonl")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := OpenStore(context.Background(), StoreOptions{Dir: filepath.Dir(path), NoOffsetIndex: true})
		if err != nil {
			t.Fatal(err)
		}
		v, err := st.View(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		off, n, ok := contiguous(v.ix.Entries())
		v.Close()
		if ok != tc.ok {
			t.Errorf("%s: contiguous %v, want %v", tc.name, ok, tc.ok)
			continue
		}
		if ok {
			if want := int64(len(head) + 1); off != want {
				t.Errorf("%s: range starts at %d, want %d", tc.name, off, want)
			}
			if got, want := text[off:off+n], strings.Join(body, "\n"); got != want {
				t.Errorf("%s: the range holds %q, want the entries' lines", tc.name, got)
			}
		}
	}
}
