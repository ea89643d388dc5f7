package search

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

func TestRowCacheRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rows-0.cache")
	rows := map[string]fileRow{
		"/s/a.jsonl":  {path: "/s/a.jsonl", kind: fileJSONL, size: 120, mtime: 1700000000123456789, ino: 1<<63 | 42, end: 120},
		"/s/b/m.json": {path: "/s/b/m.json", kind: fileAUMessage, size: 7, mtime: 0, ino: 0, end: 0},
	}
	if err := storeRowCache(vfs.OS(), path, "id:3", rows); err != nil {
		t.Fatal(err)
	}
	got, ok := loadRowCache(vfs.OS(), path, "id:3")
	if !ok {
		t.Fatal("a cache just written was not read back")
	}
	if diff := cmp.Diff(rows, got, cmp.AllowUnexported(fileRow{})); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(path); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0) {
		t.Errorf("cache file mode: %v, %v", fi, err)
	}
	data, _ := os.ReadFile(path)
	for _, tc := range []struct {
		name string
		data []byte
		tag  string
	}{
		{"another generation", data, "id:4"},
		{"another database", data, "other:3"},
		{"truncated", data[:len(data)-9], "id:3"},
		{"empty", nil, "id:3"},
		{"a flipped byte", flip(data, len(data)/2), "id:3"},
	} {
		if err := os.WriteFile(path, tc.data, 0o600); err != nil {
			t.Fatal(err)
		}
		if got, ok := loadRowCache(vfs.OS(), path, tc.tag); ok {
			t.Errorf("%s: cache served %d rows", tc.name, len(got))
		}
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0x20
	return c
}

// TestRowCacheNeverStale checks that a search finds what a file gained
// whatever the row cache holds: a cache of an earlier generation, or
// garbage, is not believed.
func TestRowCacheNeverStale(t *testing.T) {
	skipOwn(t, "the row cache is FTS5's")
	root, s1, _ := fixtureStore(t)
	stores := []layout.Place{{Format: layout.FormatJSONL, Root: root}}
	dir := filepath.Join(t.TempDir(), "index")
	// Files changed within the last seconds are always looked at again
	// (racy): the store is aged so that the cache decides.
	age := func(d time.Duration) {
		filepath.WalkDir(root, func(p string, _ fs.DirEntry, _ error) error {
			tm := time.Now().Add(-time.Hour + d)
			return os.Chtimes(p, tm, tm)
		})
	}
	age(0)
	x := openIndex(t, Options{Dir: dir})
	searchAll(t, x, Query{Text: "flaky", Stores: stores})
	caches, _ := filepath.Glob(filepath.Join(dir, "rows-*.cache"))
	if len(caches) == 0 {
		t.Fatal("no row cache was written by a search")
	}
	old := map[string][]byte{}
	for _, c := range caches {
		old[c], _ = os.ReadFile(c)
	}
	for i, word := range []string{"zebra", "giraffe", "okapi"} {
		appendLines(t, s1, userLine("z"+word, "x1", "2026-03-01T10:00:00.000Z", "a "+word+" crossing"))
		age(time.Duration(i+1) * time.Minute)
		if diff := cmp.Diff([]string{"z" + word + " user"}, searchAll(t, x, Query{Text: word, Stores: stores})); diff != "" {
			t.Errorf("%s after growing (-want +got):\n%s", word, diff)
		}
		// Put back the caches of before the growth (then garbage): the
		// next search must still see the file as it is.
		for c, b := range old {
			if i == 2 {
				break
			}
			if i == 1 {
				b = []byte("garbage")
			}
			if err := os.WriteFile(c, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		x.Close()
		if i == 2 {
			// The databases are gone (deleted, or emptied as damaged)
			// and caches of another database claim every file as it
			// is: they must not make the files look indexed.
			dbs, _ := filepath.Glob(filepath.Join(dir, "index-*"))
			for _, db := range dbs {
				os.Remove(db)
			}
			files, err := walkFS(context.Background(), vfs.OS(), stores, func(error) {}, nil)
			if err != nil {
				t.Fatal(err)
			}
			rows := make([]map[string]fileRow, Shards)
			for k := range rows {
				rows[k] = map[string]fileRow{}
			}
			for _, f := range files {
				rows[shardOf(f.session)][f.path] = fileRow{path: f.path, kind: f.kind, size: f.size, mtime: f.mtime, ino: f.ino, end: f.size}
			}
			for k := range rows {
				if err := storeRowCache(vfs.OS(), filepath.Join(dir, fmt.Sprintf("rows-%d.cache", k)), "another:1", rows[k]); err != nil {
					t.Fatal(err)
				}
			}
		}
		x = openIndex(t, Options{Dir: dir})
		if diff := cmp.Diff([]string{"z" + word + " user"}, searchAll(t, x, Query{Text: word, Stores: stores})); diff != "" {
			t.Errorf("%s with a stale row cache (-want +got):\n%s", word, diff)
		}
	}
}
