package search

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWatchSeesEveryChange: with Options.Watch, a search right after any
// change to the store (an append, a new session in a new directory, a
// deletion, a rename, a replacement) gives what a search without the
// watch gives.
func TestWatchSeesEveryChange(t *testing.T) {
	root, s1, s2 := fixtureStore(t)
	x := openIndex(t, Options{Watch: true})
	ref := openIndex(t, Options{}) // walks at every search
	check := func(what, text string) {
		t.Helper()
		watchCheck(t, x, ref, root, what, text)
	}
	check("first", "flaky")
	check("again", "flaky")
	for i := range 20 {
		word := fmt.Sprintf("zebra%d", i)
		appendLines(t, s1, userLine(fmt.Sprintf("w%d", i), "", "2026-03-01T10:00:00.000Z", word))
		check("an append", word)
	}
	s3 := filepath.Join(root, "--home-dev-new--", "2026-03-09T10-00-00-000Z_s3-0000.jsonl")
	writeLines(t, s3, []string{header("s3-0000", "/home/dev/new", "2026-03-09T10:00:00.000Z"),
		userLine("n1", "", "2026-03-09T10:00:01.000Z", "okapi in a new directory")})
	check("a new directory", "okapi")
	appendLines(t, s3, userLine("n2", "n1", "2026-03-09T10:00:02.000Z", "okapi again"))
	check("an append in the new directory", "okapi")
	if err := os.Rename(s2, s2+".moved.jsonl"); err != nil {
		t.Fatal(err)
	}
	check("a rename", "network")
	writeLines(t, s2+".moved.jsonl", []string{header("s2-0000", "/home/dev/other", "2026-03-05T10:00:00.000Z"),
		userLine("u9", "", "2026-03-05T10:00:01.000Z", "replaced by a tapir")})
	check("a replacement", "network OR tapir")
	if err := os.Remove(s3); err != nil {
		t.Fatal(err)
	}
	check("a deletion", "okapi")
	if err := os.RemoveAll(filepath.Dir(s3)); err != nil {
		t.Fatal(err)
	}
	writeLines(t, s3, []string{header("s3-0000", "/home/dev/new", "2026-03-09T10:00:00.000Z"),
		userLine("n1", "", "2026-03-09T10:00:01.000Z", "okapi is back")})
	check("a directory made again", "okapi")
}

// TestWatchSkipsTheWalk: a search that finds nothing changed does not
// look at the files (a change made through a hard link outside the
// watched directories is not seen, as Options.Watch says), until
// something happens in a watched directory or another index writer
// changes the shards; without Watch the change is seen at once.
func TestWatchSkipsTheWalk(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Options.Watch watches on Linux only")
	}
	root, s1, _ := fixtureStore(t)
	outside := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Link(s1, outside); err != nil {
		t.Skip("no hard links here:", err)
	}
	dir := filepath.Join(t.TempDir(), "index")
	x := openIndex(t, Options{Dir: dir, Watch: true})
	q := Query{Stores: dirPlaces(root), Text: "capybara"}
	if got := searchAll(t, x, q); len(got) != 0 {
		t.Fatalf("before: %v", got)
	}
	appendLines(t, outside, userLine("h1", "", "2026-03-01T10:00:00.000Z", "capybara"))
	if got := searchAll(t, x, q); len(got) != 0 {
		t.Errorf("the watched search walked the store: %v", got)
	}
	// Another writer of the index (a search of another store) changes the
	// shards' generations: the next search walks again.
	other, _, _ := fixtureStore(t)
	searchAll(t, openIndex(t, Options{Dir: dir}), Query{Stores: dirPlaces(other), Text: "flaky"})
	if got := searchAll(t, x, q); len(got) != 1 {
		t.Errorf("after another writer: %v, want the hit", got)
	}
	appendLines(t, outside, userLine("h2", "h1", "2026-03-01T10:00:01.000Z", "capybara twice"))
	if got := searchAll(t, x, q); len(got) != 1 {
		t.Errorf("unseen change: %v, want the one hit of before", got)
	}
	// Anything in a watched directory: the walk again.
	if err := os.WriteFile(filepath.Join(filepath.Dir(s1), "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := searchAll(t, x, q); len(got) != 2 {
		t.Errorf("after a change in the directory: %v, want both hits", got)
	}
	// Without Watch every search walks.
	appendLines(t, outside, userLine("h3", "h2", "2026-03-01T10:00:02.000Z", "capybara thrice"))
	if got := searchAll(t, openIndex(t, Options{Dir: dir}), q); len(got) != 3 {
		t.Errorf("without a watch: %v, want three hits", got)
	}
}

// TestWatchLeftOff: a store holding a symbolic link, and a search that
// met a file it could not read, are walked at every search.
func TestWatchLeftOff(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Options.Watch watches on Linux only")
	}
	root, s1, _ := fixtureStore(t)
	outside := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Link(s1, outside); err != nil {
		t.Skip("no hard links here:", err)
	}
	if err := os.Symlink(filepath.Join(t.TempDir(), "elsewhere.jsonl"), filepath.Join(root, "dangling.jsonl")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	x := openIndex(t, Options{Watch: true, Warn: func(error) {}})
	q := Query{Stores: dirPlaces(root), Text: "capybara"}
	searchAll(t, x, q)
	appendLines(t, outside, userLine("h1", "", "2026-03-01T10:00:00.000Z", "capybara"))
	if got := searchAll(t, x, q); len(got) != 1 {
		t.Errorf("a store with a link: %v, want the hit (walked)", got)
	}
}

// watchCheck compares a watched search with one that walks.
func watchCheck(t *testing.T, x, ref *Index, root, what, text string) {
	t.Helper()
	q := Query{Stores: dirPlaces(root), Text: text}
	got := searchAll(t, x, q)
	want := searchAll(t, ref, q)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: %q (-walked +watched):\n%s", what, text, diff)
	}
}
