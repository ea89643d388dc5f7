package search

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWatchRootReplaced: the store's root renamed aside and made again is
// watched again (a watch follows the directory, not its path).
func TestWatchRootReplaced(t *testing.T) {
	root, _, _ := fixtureStore(t)
	x := openIndex(t, Options{Watch: true})
	ref := openIndex(t, Options{})
	watchCheck(t, x, ref, root, "first", "flaky")
	if err := os.Rename(root, root+".old"); err != nil {
		t.Fatal(err)
	}
	s := filepath.Join(root, "--home-dev-app--", "2026-03-09T10-00-00-000Z_s9-0000.jsonl")
	writeLines(t, s, []string{header("s9-0000", "/home/dev/app", "2026-03-09T10:00:00.000Z"),
		userLine("n1", "", "2026-03-09T10:00:01.000Z", "okapi")})
	watchCheck(t, x, ref, root, "new root", "okapi")
	for i := range 3 {
		w := fmt.Sprintf("zebra%d", i)
		appendLines(t, s, userLine(fmt.Sprintf("z%d", i), "n1", "2026-03-09T10:00:02.000Z", w))
		watchCheck(t, x, ref, root, "append in new root", w)
	}
}

// TestWatchDirRenamedAndMadeAgain: a subdirectory renamed away and made
// again under its old name is watched again.
func TestWatchDirRenamedAndMadeAgain(t *testing.T) {
	root, s1, _ := fixtureStore(t)
	x := openIndex(t, Options{Watch: true})
	ref := openIndex(t, Options{})
	watchCheck(t, x, ref, root, "first", "flaky")
	d := filepath.Dir(s1)
	if err := os.Rename(d, filepath.Join(root, "--moved--")); err != nil {
		t.Fatal(err)
	}
	watchCheck(t, x, ref, root, "moved", "flaky")
	s := filepath.Join(d, "2026-03-09T10-00-00-000Z_s9-0000.jsonl")
	writeLines(t, s, []string{header("s9-0000", "/home/dev/app", "2026-03-09T10:00:00.000Z"),
		userLine("n1", "", "2026-03-09T10:00:01.000Z", "okapi")})
	watchCheck(t, x, ref, root, "made again", "okapi")
	appendLines(t, s, userLine("z1", "n1", "2026-03-09T10:00:02.000Z", "zebra"))
	watchCheck(t, x, ref, root, "append in dir made again", "zebra")
}

// TestWatchLeftOffWithoutWarn: a search that left a file out (a named
// pipe) never lets the next one skip the walk, whether or not
// Options.Warn is set.
func TestWatchLeftOffWithoutWarn(t *testing.T) {
	root, s1, _ := fixtureStore(t)
	outside := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Link(s1, outside); err != nil {
		t.Skip(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.jsonl"), 0o600); err != nil {
		t.Skip(err)
	}
	for _, warn := range []bool{true, false} {
		o := Options{Watch: true}
		if warn {
			o.Warn = func(error) {}
		}
		x := openIndex(t, o)
		q := Query{Stores: dirPlaces(root), Text: fmt.Sprintf("capy%v", warn)}
		searchAll(t, x, q)
		appendLines(t, outside, userLine(fmt.Sprintf("h%v", warn), "", "2026-03-01T10:00:00.000Z", fmt.Sprintf("capy%v", warn)))
		if got := searchAll(t, x, q); len(got) != 1 {
			t.Errorf("warn=%v: %v, want the hit (walked)", warn, got)
		}
	}
}

// TestWatchOverflow: after the event queue overflowed (and so lost the
// removal of a directory's watch), a directory made again is watched.
func TestWatchOverflow(t *testing.T) {
	root, s1, _ := fixtureStore(t)
	x := openIndex(t, Options{Watch: true})
	ref := openIndex(t, Options{})
	watchCheck(t, x, ref, root, "first", "flaky")
	// Each write and close of the file queues two events (inotify merges
	// only identical events in a row): more than the queue holds.
	limit := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		fmt.Sscan(string(b), &limit)
	}
	noise := filepath.Join(filepath.Dir(s1), "noise.txt")
	for i := range limit/2 + 1000 {
		if err := os.WriteFile(noise, []byte{byte(i)}, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := filepath.Join(root, "--home-dev-other--")
	if err := os.RemoveAll(d); err != nil {
		t.Fatal(err)
	}
	s := filepath.Join(d, "2026-03-09T10-00-00-000Z_s9-0000.jsonl")
	writeLines(t, s, []string{header("s9-0000", "/home/dev/app", "2026-03-09T10:00:00.000Z"),
		userLine("n1", "", "2026-03-09T10:00:01.000Z", "okapi")})
	watchCheck(t, x, ref, root, "after overflow", "okapi")
	appendLines(t, s, userLine("z1", "n1", "2026-03-09T10:00:02.000Z", "zebra"))
	watchCheck(t, x, ref, root, "append after overflow", "zebra")
}

// TestWatcherNamesWrites: writes and attribute changes of files are named
// by the watcher; an entry made, renamed or removed says only that
// something happened.
func TestWatcherNamesWrites(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.jsonl")
	writeLines(t, f, []string{"{}"})
	w, err := newWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if !w.add(dir) {
		t.Fatal("no watch")
	}
	if _, ok := w.changes(); ok {
		t.Error("a new watcher names what changed before it")
	}
	w.generation()
	w.mark()
	appendLines(t, f, "{}")
	w.generation()
	if got, ok := w.changes(); !ok || len(got) != 1 || got[0] != f {
		t.Errorf("after an append: %v, %v", got, ok)
	}
	w.mark()
	if err := os.Chmod(f, 0o640); err != nil {
		t.Fatal(err)
	}
	w.generation()
	if got, ok := w.changes(); !ok || len(got) != 1 || got[0] != f {
		t.Errorf("after a chmod: %v, %v", got, ok)
	}
	for _, step := range []struct {
		what string
		do   func() error
	}{ // in this order: each uses what the one before made
		{"made", func() error { return os.WriteFile(filepath.Join(dir, "b.jsonl"), nil, 0o600) }},
		{"renamed", func() error { return os.Rename(filepath.Join(dir, "b.jsonl"), filepath.Join(dir, "c.jsonl")) }},
		{"removed", func() error { return os.Remove(filepath.Join(dir, "c.jsonl")) }},
		{"subdir", func() error { return os.Mkdir(filepath.Join(dir, "d"), 0o700) }},
	} {
		what, do := step.what, step.do
		w.generation()
		w.mark()
		if err := do(); err != nil {
			t.Fatal(err)
		}
		w.generation()
		if got, ok := w.changes(); ok {
			t.Errorf("%s: %v, want only that something happened", what, got)
		}
	}
}

// TestWatchAfterWrites: searches of a watched index after files were
// written to (appended, cut short, rewritten in place at the same size),
// which stat only those files, find what a search that walks finds.
func TestWatchAfterWrites(t *testing.T) {
	root, s1, s2 := fixtureStore(t)
	x := openIndex(t, Options{Watch: true, Engine: EngineOwn}) // (the file list is kept for the own engine only)
	ref := openIndex(t, Options{})
	watchCheck(t, x, ref, root, "first", "flaky")
	for i := range 5 {
		w := fmt.Sprintf("quagga%d", i)
		appendLines(t, s1, userLine(fmt.Sprintf("q%d", i), "", "2026-03-01T10:00:00.000Z", w))
		watchCheck(t, x, ref, root, "append", w)
		if x.walked == nil {
			t.Fatalf("round %d: no file list kept", i)
		}
	}
	data, err := os.ReadFile(s1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s1, data[:len(data)/2], 0o600); err != nil { // cut short, in place
		t.Fatal(err)
	}
	watchCheck(t, x, ref, root, "cut short", "quagga4")
	watchCheck(t, x, ref, root, "cut short", "flaky")
	b, err := os.ReadFile(s2)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), "network")
	if i < 0 {
		t.Fatal("fixture has no 'network'")
	}
	copy(b[i:], "notwork")
	f, err := os.OpenFile(s2, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(b, 0); err != nil { // same size, in place
		t.Fatal(err)
	}
	f.Close()
	watchCheck(t, x, ref, root, "rewritten in place", "notwork")
	watchCheck(t, x, ref, root, "rewritten in place", "network")
}

// TestWatchedPlanIsTheChange: a watched Index whose last search found
// the index current plans the next update from the files written since
// (the watch's list), not from every file of the stores, and still
// answers as a search that walks; once another process has changed the
// index, it plans from every file again.
func TestWatchedPlanIsTheChange(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	const n = 40
	paths := make([]string, n)
	for i := range paths {
		paths[i] = filepath.Join(root, "--home-dev-app--", fmt.Sprintf("2026-03-01T09-00-%02d-000Z_p%02d-0000.jsonl", i, i))
		writeLines(t, paths[i], []string{header(fmt.Sprintf("p%02d-0000", i), "/home/dev/app", "2026-03-01T09:00:00.000Z"),
			userLine("u1", "", "2026-03-01T09:00:01.000Z", fmt.Sprintf("start%d", i))})
	}
	dir := filepath.Join(t.TempDir(), "index")
	x := openIndex(t, Options{Dir: dir, Watch: true, Engine: EngineOwn})
	ref := openIndex(t, Options{Engine: EngineOwn})
	watchCheck(t, x, ref, root, "first", "start3")
	if x.planned < n {
		t.Fatalf("first search planned %d files, want every one (%d)", x.planned, n)
	}
	for round := range 6 {
		w := fmt.Sprintf("wombat%d", round)
		appendLines(t, paths[round], userLine(fmt.Sprintf("a%d", round), "u1", "2026-03-01T09:00:02.000Z", w))
		appendLines(t, paths[n-1-round], userLine(fmt.Sprintf("b%d", round), "u1", "2026-03-01T09:00:02.000Z", w))
		watchCheck(t, x, ref, root, "append", w)
		if x.planned != 2 {
			t.Errorf("round %d: planned %d files, want the 2 written", round, x.planned)
		}
	}
	// Another process updates the index: the state is not the one x left.
	other := openIndex(t, Options{Dir: dir, Engine: EngineOwn})
	appendLines(t, paths[10], userLine("c1", "u1", "2026-03-01T09:00:03.000Z", "okapi"))
	watchCheck(t, other, ref, root, "other process", "okapi")
	appendLines(t, paths[11], userLine("c2", "u1", "2026-03-01T09:00:03.000Z", "okapi"))
	watchCheck(t, x, ref, root, "after the other process", "okapi")
	if x.planned < n {
		t.Errorf("after another process's update: planned %d files, want every one (%d)", x.planned, n)
	}
	appendLines(t, paths[12], userLine("c3", "u1", "2026-03-01T09:00:04.000Z", "okapi"))
	watchCheck(t, x, ref, root, "again", "okapi")
	if x.planned != 1 {
		t.Errorf("planned %d files, want the 1 written", x.planned)
	}
}

// TestWatchedKeepsStateReadOnly: a watched Index that finds the index
// current as another process left it (only reading it) keeps the state
// it read, as it does one it updated, so its next searches decode
// nothing.
func TestWatchedKeepsStateReadOnly(t *testing.T) {
	root, s1, s2 := fixtureStore(t)
	for _, p := range []string{s1, s2} { // not racy: the index is current, only read
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "index")
	other := openIndex(t, Options{Dir: dir, Engine: EngineOwn})
	q := Query{Stores: dirPlaces(root), Text: "flaky"}
	want := searchAll(t, other, q)
	x := openIndex(t, Options{Dir: dir, Watch: true, Engine: EngineOwn})
	if got := searchAll(t, x, q); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("watched: %v, want %v", got, want)
	}
	if x.stCache == nil {
		t.Fatal("the state read from an index found current is not kept")
	}
	kept := x.stCache.st
	searchAll(t, x, q)
	if x.stCache == nil || x.stCache.st != kept {
		t.Error("the next search decoded the state again")
	}
	appendLines(t, s1, userLine("k1", "", "2026-03-01T10:00:00.000Z", "okapi"))
	if got := searchAll(t, x, Query{Stores: dirPlaces(root), Text: "okapi"}); len(got) != 1 {
		t.Errorf("after an append: %v, want the new line", got)
	}
}
