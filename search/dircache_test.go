package search

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// listNames returns the names and types c's ReadDir gives for dir.
func listNames(t *testing.T, c *dirCache, dir string) []string {
	t.Helper()
	return namesOf(t, c.ReadDir, dir)
}

// osNames is listNames of os.ReadDir.
func osNames(t *testing.T, dir string) []string {
	t.Helper()
	return namesOf(t, os.ReadDir, dir)
}

// namesOf returns "name:type" of each entry readDir gives for dir.
func namesOf(t *testing.T, readDir func(string) ([]fs.DirEntry, error), dir string) []string {
	t.Helper()
	ents, err := readDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name()+":"+e.Type().String())
	}
	return out
}

// countReads returns the real filesystem, through which the reads of
// the directory dir are counted in *n.
func countReads(dir string) (_ *vfstest.FaultFS, n *int) {
	n = new(int)
	fsys := vfstest.NewFaultFS(vfs.OS())
	fsys.Inject(vfstest.Fault{Op: vfstest.OpReadDir, Repeat: true, Match: func(p string) bool {
		if p == dir {
			*n++
		}
		return false
	}})
	return fsys, n
}

// TestDirCache: a directory's listing is kept once a second listing,
// dirSettle or more after the first, confirms it; from then on it is
// given without reading the directory, by this cache and by one opened
// from the file it saved, until an entry is made, removed or renamed,
// or the directory is replaced; each answer is os.ReadDir's.
func TestDirCache(t *testing.T) {
	defer func(d time.Duration) { dirSettle = d }(dirSettle)
	dirSettle = 50 * time.Millisecond
	root := t.TempDir()
	dir := filepath.Join(root, "--w--")
	for _, n := range []string{"b.jsonl", "a.jsonl", "c.txt"} {
		writeFileAll(t, filepath.Join(dir, n), "{}\n")
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	cacheFile := filepath.Join(t.TempDir(), ownDirsName)
	fsys, reads := countReads(dir)
	check := func(c *dirCache, wantRead bool, why string) {
		t.Helper()
		before := *reads
		got := listNames(t, c, dir)
		if want := osNames(t, dir); !slices.Equal(got, want) {
			t.Fatalf("%s: listing %q, want %q", why, got, want)
		}
		if read := *reads > before; read != wantRead {
			t.Fatalf("%s: directory read %v, want %v", why, read, wantRead)
		}
	}
	// Listings are kept here whatever the filesystem of the test's
	// directory (keepsListings): the test makes each change it checks.
	open := func() *dirCache {
		c := openDirCache(fsys, cacheFile)
		c.keep = func(string) bool { return true }
		return c
	}
	c := open()
	check(c, true, "first listing")
	check(c, true, "a listing before dirSettle")
	time.Sleep(2 * dirSettle)
	check(c, true, "the confirming listing")
	check(c, false, "a confirmed listing")
	c.save()
	c = open()
	check(c, false, "a confirmed listing, from the file")
	// Listings another machine's clock timed are not used.
	c.host += "-other"
	c.dirty = true
	c.save()
	c = open()
	if len(c.dirs) != 0 {
		t.Fatalf("%d listings of another host used", len(c.dirs))
	}
	check(c, true, "a listing of another host's")
	time.Sleep(2 * dirSettle)
	check(c, true, "a listing of another host's, confirmed")

	settle := func(why string) {
		t.Helper()
		check(c, true, why)
		time.Sleep(2 * dirSettle)
		check(c, true, why+", confirmed")
		check(c, false, why+", kept")
	}
	writeFileAll(t, filepath.Join(dir, "d.jsonl"), "{}\n")
	settle("a file made")
	if err := os.Remove(filepath.Join(dir, "a.jsonl")); err != nil {
		t.Fatal(err)
	}
	settle("a file removed")
	if err := os.Rename(filepath.Join(dir, "b.jsonl"), filepath.Join(dir, "e.jsonl")); err != nil {
		t.Fatal(err)
	}
	settle("a file renamed")
	// A file appended to is not an entry changed: the listing stays.
	if err := os.WriteFile(filepath.Join(dir, "e.jsonl"), []byte("{}\n{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check(c, false, "a file written")
	// The directory replaced by another of the same entries.
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"d.jsonl", "e.jsonl", "c.txt"} {
		writeFileAll(t, filepath.Join(dir, n), "{}\n")
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	settle("the directory replaced")
	// A directory gone, and so not listed, is left out at the next save.
	other := filepath.Join(root, "--gone--")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	listNames(t, c, other)
	c.save()
	c = open()
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	writeFileAll(t, filepath.Join(dir, "f.jsonl"), "{}\n")
	check(c, true, "a file made, the other directory gone")
	c.save()
	c = open()
	if _, ok := c.dirs[other]; ok {
		t.Error("the listing of a directory gone was kept")
	}
	if _, ok := c.dirs[dir]; !ok {
		t.Error("the listing of a directory listed was dropped")
	}
}

// TestDirCacheDamaged: a file of listings that is torn, changed or not
// one is started afresh: every directory is read.
func TestDirCacheDamaged(t *testing.T) {
	dir := t.TempDir()
	writeFileAll(t, filepath.Join(dir, "a.jsonl"), "{}\n")
	good := encodeDirCache("host", map[string]*cachedDir{dir: {id: 1, mtime: 2, ctime: 3, first: 4, settled: true, names: []string{"a.jsonl"}, types: []os.FileMode{0}}})
	if h, _, ok := decodeDirCache(good); !ok || h != "host" {
		t.Fatal("a whole encoding is not decoded")
	}
	for n := range len(good) {
		if _, _, ok := decodeDirCache(good[:n]); ok {
			t.Fatalf("truncated to %d: decoded", n)
		}
	}
	for i := range good {
		b := slices.Clone(good)
		b[i] ^= 0x20
		if _, _, ok := decodeDirCache(b); ok {
			t.Fatalf("byte %d changed: decoded", i)
		}
	}
	path := filepath.Join(t.TempDir(), ownDirsName)
	if err := os.WriteFile(path, good[:len(good)-1], 0o600); err != nil {
		t.Fatal(err)
	}
	if c := openDirCache(vfs.OS(), path); len(c.dirs) != 0 {
		t.Fatalf("a torn file gave %d listings", len(c.dirs))
	}
}

// TestDirCacheSearch: searches in new processes (an Index without a
// watch each) keep the store's listings, and once they are kept a new
// session, one removed, and an append are each found by the next
// search.
func TestDirCacheSearch(t *testing.T) {
	defer func(d time.Duration) { dirSettle = d }(dirSettle)
	dirSettle = 50 * time.Millisecond
	base := t.TempDir()
	sessions := filepath.Join(base, "sessions")
	cwd := filepath.Join(sessions, "--home-dev-app--")
	session := func(n int, word string) string {
		id := fmt.Sprintf("0badcafe-1234-5678-9abc-%012d", n)
		p := filepath.Join(cwd, "2026-03-01T09-00-00-000Z_"+id+".jsonl")
		writeLines(t, p, []string{
			header(id, "/home/dev/app", "2026-03-01T09:00:00.000Z"),
			msg(fmt.Sprintf("u%d", n), "", "2026-03-01T09:00:01.000Z", `{"role":"user","content":"a `+word+` text","timestamp":1}`),
		})
		return p
	}
	first := session(1, "kiwiword")
	if !keepsListings(cwd) {
		t.Skipf("%s: no listings are kept on its filesystem", cwd)
	}
	dir := filepath.Join(base, "index")
	store := layout.Place{Name: "a", Format: layout.FormatJSONL, Root: sessions}
	count := func(word string) int {
		t.Helper()
		x := openIndex(t, Options{Dir: dir, Engine: EngineOwn})
		hits, err := collect(x, Query{Text: word, Stores: []layout.Place{store}})
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		return len(hits)
	}
	kept := func() bool {
		t.Helper()
		c := openDirCache(vfs.OS(), filepath.Join(dir, ownDirName, ownDirsName))
		d := c.dirs[cwd]
		return d != nil && d.settled
	}
	settle := func(why string) {
		t.Helper()
		for range 3 {
			count("kiwiword")
			time.Sleep(2 * dirSettle)
		}
		if !kept() {
			t.Fatalf("%s: the listing of %s is not kept", why, cwd)
		}
	}
	settle("a first session")
	second := session(2, "zebraword")
	if n := count("zebraword"); n != 1 {
		t.Fatalf("a new session beside a kept listing: %d hits, want 1", n)
	}
	settle("a second session")
	if err := os.Remove(second); err != nil {
		t.Fatal(err)
	}
	if n := count("zebraword"); n != 0 {
		t.Fatalf("a session removed beside a kept listing: %d hits, want 0", n)
	}
	settle("a session removed")
	f, err := os.OpenFile(first, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(msg("u9", "u1", "2026-03-01T09:00:02.000Z", `{"role":"user","content":"an appended mangoword","timestamp":2}`) + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if n := count("mangoword"); n != 1 {
		t.Fatalf("an append to a session of a kept listing: %d hits, want 1", n)
	}
	if !kept() {
		t.Error("an append made the listing be read again")
	}
	// A rebuild reads every directory, kept or not.
	fsys, reads := countReads(cwd)
	for _, rebuild := range []bool{false, true} {
		*reads = 0
		x := openIndex(t, Options{Dir: dir, Engine: EngineOwn, FS: fsys, Rebuild: rebuild})
		hits, err := collect(x, Query{Text: "kiwiword", Stores: []layout.Place{store}})
		if err != nil || len(hits) != 1 {
			t.Fatalf("rebuild %v: %d hits, %v", rebuild, len(hits), err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		if (*reads > 0) != rebuild {
			t.Errorf("rebuild %v: %s read %d times", rebuild, cwd, *reads)
		}
	}
}

// TestDirCacheFirstBuild: a first build whose walk began dirSettle or
// more before it ended leaves its listings kept and confirmed, so the
// next search reads no directory; one that ended sooner leaves them to
// be confirmed by a later search, which reads them again.
func TestDirCacheFirstBuild(t *testing.T) {
	defer func(d time.Duration) { dirSettle = d }(dirSettle)
	for _, tc := range []struct {
		settle time.Duration
		reads  bool // the search after the build reads the directory
	}{{0, false}, {time.Hour, true}} {
		dirSettle = tc.settle
		base := t.TempDir()
		cwd := filepath.Join(base, "sessions", "--home-dev-app--")
		id := "0badcafe-1234-5678-9abc-000000000001"
		writeLines(t, filepath.Join(cwd, "2026-03-01T09-00-00-000Z_"+id+".jsonl"), []string{
			header(id, "/home/dev/app", "2026-03-01T09:00:00.000Z"),
			msg("u1", "", "2026-03-01T09:00:01.000Z", `{"role":"user","content":"a kiwiword text","timestamp":1}`),
		})
		if !keepsListings(cwd) {
			t.Skipf("%s: no listings are kept on its filesystem", cwd)
		}
		store := layout.Place{Name: "a", Format: layout.FormatJSONL, Root: filepath.Join(base, "sessions")}
		fsys, reads := countReads(cwd)
		for i := range 2 {
			*reads = 0
			x := openIndex(t, Options{Dir: filepath.Join(base, "index"), Engine: EngineOwn, FS: fsys})
			hits, err := collect(x, Query{Text: "kiwiword", Stores: []layout.Place{store}})
			if err != nil || len(hits) != 1 {
				t.Fatalf("settle %v, search %d: %d hits, %v", tc.settle, i, len(hits), err)
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if (*reads > 0) != tc.reads {
			t.Errorf("settle %v: the search after the first build read %s %d times", tc.settle, cwd, *reads)
		}
	}
}
