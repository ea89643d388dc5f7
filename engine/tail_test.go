package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
)

// tailCases are session files with what a backwards read must get right:
// blank and malformed lines, lines that are JSON but not objects, a
// second header, CRLF endings, a last entry without its newline, a torn
// last line, trailing blank text, lines longer than a read, and files
// that are read whole instead (version 1, a byte order mark, a blank
// first line).
func tailCases() map[string]string {
	m := func(id string) string { return testenv.PiMessage(id, "") }
	long := func(id string, n int) string {
		return fmt.Sprintf(`{"type":"message","id":%q,"parentId":null,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"toolResult","content":"%s"}}`, id, strings.Repeat("x", n))
	}
	h := testenv.PiHeader
	return map[string]string{
		"plain":             testenv.Lines(h, m("a"), m("b"), m("c"), m("d")),
		"only header":       testenv.Lines(h),
		"header unended":    h,
		"blank lines":       testenv.Lines(h, m("a"), "", "   ", "\r", "\u00a0", m("b"), "", m("c"), "  ", ""),
		"malformed":         testenv.Lines(h, m("a"), `{"type":"mess`, "[1,2]", `"str"`, "null", m("b"), "garbage", m("c"), "{}x"),
		"second header":     testenv.Lines(h, m("a"), h, m("b")),
		"crlf":              strings.ReplaceAll(testenv.Lines(h, m("a"), m("b"), m("c")), "\n", "\r\n"),
		"unterminated":      testenv.Lines(h, m("a"), m("b")) + m("c"),
		"unterminated ws":   testenv.Lines(h, m("a"), m("b")) + m("c") + " \u00a0\t",
		"torn":              testenv.Lines(h, m("a"), m("b")) + `{"type":"message","id":"c","par`,
		"trailing blank":    testenv.Lines(h, m("a"), m("b")) + "\n\n  \n\u2028",
		"long lines":        testenv.Lines(h, m("a"), long("b", 200<<10), "["+strings.Repeat("1,", 100<<10)+"1]", "  "+long("c", 70<<10), m("d"), long("e", 300<<10)),
		"long torn":         testenv.Lines(h, m("a"), long("b", 100<<10)) + long("c", 200<<10)[:150<<10],
		"long unterminated": testenv.Lines(h, m("a")) + long("b", 200<<10),
		"no entries":        testenv.Lines(h, "", "garbage", "[]"),
		"v1":                testenv.Lines(`{"type":"session","id":"v1s","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}`, `{"type":"message","timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":"one"}}`, `{"type":"message","timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"user","content":"two"}}`),
		"bom":               "\ufeff" + testenv.Lines(h, m("a"), m("b")),
		"blank first":       testenv.Lines("", h, m("a"), m("b")),
	}
}

// OpenTail gives exactly the last n entries a read-only Open gives, for
// every n, and the same header.
func TestOpenTailMatchesOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, data := range tailCases() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".jsonl")
			testenv.WriteFile(t, p, data)
			s, err := openStore(t, engine.StoreOptions{NoOffsetIndex: true}).Open(context.Background(), p, engine.OpenOptions{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			all := s.Entries()
			for n := 0; n <= len(all)+1; n++ {
				tl, err := openStore(t, engine.StoreOptions{NoOffsetIndex: true}).Tail(context.Background(), p, n)
				if err != nil {
					t.Fatalf("OpenTail(%d): %v", n, err)
				}
				want := all[max(0, len(all)-n):]
				got := tl.Entries()
				if len(got) != len(want) {
					t.Fatalf("OpenTail(%d): %d entries, want %d", n, len(got), len(want))
				}
				for i := range got {
					if string(got[i].Raw) != string(want[i].Raw) || got[i].Offset != want[i].Offset || got[i].ID != want[i].ID {
						t.Errorf("OpenTail(%d) entry %d: %q at %d, want %q at %d", n, i, got[i].Raw, got[i].Offset, want[i].Raw, want[i].Offset)
					}
				}
				if h, w := tl.Header(), s.Header(); string(h.Raw) != string(w.Raw) || h.ID != w.ID {
					t.Errorf("header %q, want %q", h.Raw, w.Raw)
				}
				tl.Close()
			}
		})
	}
}

// Follow yields what is appended after the entries OpenTail read, once
// each line is complete; after a file is replaced, the entries after the
// last one given.
func TestTailFollow(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	m := func(id string) string { return testenv.PiMessage(id, "") }
	testenv.WriteFile(t, p, testenv.Lines(testenv.PiHeader, m("a"), m("b"))+`{"type":"mess`)
	tl, err := openStore(t, engine.StoreOptions{}).Tail(context.Background(), p, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	if got := strings.Join(ids(tl.Entries()), ","); got != "b" {
		t.Fatalf("entries %s, want b", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	next, stop := iterPull(tl, ctx)
	defer stop()
	appendTo := func(s string) {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	// The torn line is finished (it was c all along), then d comes
	// without its newline, then gets it, then e.
	appendTo(strings.TrimPrefix(m("c"), `{"type":"mess`) + "\n")
	if id := next(t); id != "c" {
		t.Fatalf("followed %s, want c", id)
	}
	appendTo(m("d"))
	if id := next(t); id != "d" {
		t.Fatalf("followed %s, want d", id)
	}
	appendTo("\n" + m("e") + "\n")
	if id := next(t); id != "e" {
		t.Fatalf("followed %s, want e (d once only)", id)
	}
	// Replaced by a copy that holds one more entry.
	data, _ := os.ReadFile(p)
	tmp := p + ".new"
	testenv.WriteFile(t, tmp, string(data)+m("f")+"\n")
	if err := os.Rename(tmp, p); err != nil {
		// The follower holds the file open: wine cannot replace it.
		testenv.SkipUnderWineIf(t, errors.Is(err, fs.ErrPermission), testenv.WineRename)
		t.Fatal(err)
	}
	if id := next(t); id != "f" {
		t.Fatalf("followed %s after the file was replaced, want f", id)
	}
	appendTo(m("g") + "\n")
	if id := next(t); id != "g" {
		t.Fatalf("followed %s, want g", id)
	}
}

// iterPull follows tl every 5 ms and returns a function giving the next
// entry's id (failing after a minute).
func iterPull(tl *engine.Tail, ctx context.Context) (func(t *testing.T) string, func()) {
	type item struct {
		id  string
		err error
	}
	ch := make(chan item)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		for e, err := range tl.Follow(ctx, 5*time.Millisecond) {
			it := item{err: err}
			if e != nil {
				it.id = e.ID
			}
			select {
			case ch <- it:
			case <-ctx.Done():
				return
			}
		}
	}()
	return func(t *testing.T) string {
		t.Helper()
		select {
		case it := <-ch:
			if it.err != nil {
				t.Fatal(it.err)
			}
			return it.id
		case <-time.After(time.Minute):
			t.Fatal("nothing followed within a minute")
			return ""
		}
	}, cancel
}

// bigLastEntry writes a session of small entries (about 10 MB) whose
// last entry is a tool result of size bytes, and returns its path.
func bigLastEntry(tb testing.TB, dir string, size int) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString(testenv.PiHeader + "\n")
	for i := 0; b.Len() < 10<<20; i++ {
		b.WriteString(testenv.PiMessage(fmt.Sprintf("m%06d", i), "") + "\n")
	}
	fmt.Fprintf(&b, `{"type":"message","id":"big","parentId":null,"timestamp":"2026-03-01T09:00:02.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"%s"}],"isError":false,"timestamp":2}}`+"\n", strings.Repeat("y", size))
	p := filepath.Join(dir, "big.jsonl")
	testenv.WriteFile(tb, p, b.String())
	return p
}

// BenchmarkTailBigLastEntry reads the last two entries of a session whose
// last entry is 50 MB (tail -n 2).
func BenchmarkTailBigLastEntry(b *testing.B) {
	p := bigLastEntry(b, b.TempDir(), 50<<20)
	b.ReportAllocs()
	for b.Loop() {
		tl, err := openStore(b, engine.StoreOptions{}).Tail(context.Background(), p, 2)
		if err != nil {
			b.Fatal(err)
		}
		if len(tl.Entries()) != 2 {
			b.Fatal("not two entries")
		}
		tl.Close()
	}
}
