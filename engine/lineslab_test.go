package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// TestAppendedLinesDoNotOverlap appends messages of many sizes, some
// larger than the blocks lines are built in, and checks that every entry
// still holds exactly its own bytes afterwards, in memory and in the file.
func TestAppendedLinesDoNotOverlap(t *testing.T) {
	t.Parallel()
	s, err := openStore(t, engine.StoreOptions{Dir: t.TempDir()}).Create(context.Background(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(3, 4))
	var texts []string
	for i := range 400 {
		n := r.IntN(3000)
		if i%50 == 7 {
			n = 70000 + r.IntN(40000)
		}
		text := strings.Repeat(string(rune('a'+i%26)), n)
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		if _, err := s.AppendMessage(raw(fmt.Sprintf(`{"role":%q,"content":%q,"timestamp":%d}`, role, text, i))); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, text)
	}
	entries := s.Entries()
	if len(entries) != len(texts) {
		t.Fatalf("%d entries, want %d", len(entries), len(texts))
	}
	data, err := os.ReadFile(s.SessionFile())
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))[1:] // after the header
	for i, e := range entries {
		if want := fmt.Sprintf(`"content":%q`, texts[i]); !bytes.Contains(e.Raw, []byte(want)) {
			t.Fatalf("entry %d does not hold its own text any more: %.80q...", i, e.Raw)
		}
		if !bytes.Equal(lines[i], e.Raw) {
			t.Fatalf("line %d of the file differs from entry %d", i+2, i)
		}
	}
}
