package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// feedStore writes n sessions of several lines each beside the fixture
// sessions, every fifth line naming a word of its own.
func feedStore(t *testing.T, n int) (root string, files []string) {
	t.Helper()
	root, s1, s2 := fixtureStore(t)
	files = []string{s1, s2}
	for i := range n {
		id := fmt.Sprintf("f%d-0000", i)
		p := filepath.Join(root, "--home-dev-feed--", fmt.Sprintf("2026-04-01T10-00-%02d-000Z_%s.jsonl", i%60, id))
		lines := []string{header(id, "/home/dev/feed", "2026-04-01T10:00:00.000Z")}
		parent := ""
		for k := range 40 {
			lid := fmt.Sprintf("e%d-%d", i, k)
			text := fmt.Sprintf("feeding line %d of session %d", k, i)
			if k%5 == 0 {
				text += fmt.Sprintf(" marker%dx%d", i, k)
			}
			lines = append(lines, userLine(lid, parent, "2026-04-01T10:00:01.000Z", text))
			parent = lid
		}
		writeLines(t, p, lines)
		files = append(files, p)
	}
	ageFiles(t, files)
	return root, files
}

// ageFiles dates files an hour back, out of the window where a time is
// too recent to trust (racy), so that what is read again is the change.
func ageFiles(t *testing.T, files []string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	for _, p := range files {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

func hitKeys(t *testing.T, x *Index, q Query) []string {
	t.Helper()
	hits, err := collect(x, q)
	if err != nil {
		t.Fatalf("search %q: %v", q.Text, err)
	}
	var out []string
	for _, h := range hits {
		s := h.Session
		out = append(out, fmt.Sprint(h.File, " ", h.Offset, " ", h.Entry, " ", h.Kind, " ", h.Snippet, " ", s.Path, " ", s.ID, " ", s.Name, " ", s.Cwd))
	}
	slices.Sort(out)
	return out
}

// TestFeedChunksAreTheFiles: with chunks of a line each (a file's lines
// in many chunks), the own index finds what a scan finds, after a first
// build and after appends (a file read from where it stopped).
func TestFeedChunksAreTheFiles(t *testing.T) {
	defer func(n int) { feedText = n }(feedText)
	feedText = 1
	root, files := feedStore(t, 12)
	stores := dirPlaces(root)
	var total int64
	ox := openIndex(t, Options{Engine: EngineOwn, Progress: func(_, tot int64) { total = tot }})
	scan := openIndex(t, Options{NoIndex: true})
	check := func(when string, words ...string) {
		t.Helper()
		for _, w := range words {
			q := Query{Text: w, Stores: stores}
			got, want := hitKeys(t, ox, q), hitKeys(t, scan, q)
			if len(want) == 0 {
				t.Fatalf("%s: the scan finds no %q: the test checks nothing", when, w)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: %q: own index %d hits, scan %d; first difference:\n%s", when, w, len(got), len(want), firstDiff(got, want))
			}
		}
	}
	check("first build", "feeding", "marker3x35", "marker11x0", "flaky", "narwhal")
	// Every file's record was kept whole: nothing is read again.
	total = 0
	check("nothing changed", "feeding")
	if total != 0 {
		t.Fatalf("a search after the build read %d bytes again, want none", total)
	}
	for i, f := range files[2:5] {
		appendLines(t, f, userLine(fmt.Sprintf("late%d", i), fmt.Sprintf("e%d-39", i), "2026-04-02T10:00:00.000Z", "appended feeding lateword"))
	}
	ageFiles(t, files[2:5])
	total = 0
	check("after appends", "lateword", "feeding", "marker2x20")
	if total != 3*int64(len(userLine("late0", "e0-39", "2026-04-02T10:00:00.000Z", "appended feeding lateword"))+1) {
		t.Fatalf("after 3 appends the search read %d bytes, want the 3 lines", total)
	}
}

// TestFeedStopsOnCancel: a build cancelled while the feed reads ends
// with the context's error, leaves no goroutine behind, and the next
// search finds everything.
func TestFeedStopsOnCancel(t *testing.T) {
	defer func(n int) { feedText = n }(feedText)
	feedText = 64
	root, _ := feedStore(t, 30)
	stores := dirPlaces(root)
	dir := filepath.Join(t.TempDir(), "index")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	before := runtime.NumGoroutine()
	x := openIndex(t, Options{Dir: dir, Engine: EngineOwn, Progress: func(done, total int64) {
		if calls++; calls == 3 {
			cancel()
		}
	}})
	_, err := collectCtx(ctx, x, Query{Text: "feeding", Stores: stores})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: %v, want context.Canceled", err)
	}
	if calls >= 30 {
		t.Fatalf("the build went on after the cancel: %d files", calls)
	}
	x.Close()
	// The feed's goroutine is gone once the search has returned.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines after the cancelled build, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
	y := openIndex(t, Options{Dir: dir, Engine: EngineOwn})
	scan := openIndex(t, Options{NoIndex: true})
	q := Query{Text: "feeding", Stores: stores}
	if got, want := hitKeys(t, y, q), hitKeys(t, scan, q); !slices.Equal(got, want) {
		t.Fatalf("after the cancelled build: %d hits, scan %d; first difference:\n%s", len(got), len(want), firstDiff(got, want))
	}
}

// firstDiff shows the first place where two sorted lists differ.
func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf(" own  %q\n scan %q", g, w)
		}
	}
	return "none"
}
