package stats_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine/stats"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout/vfs"
)

// dirRun is everything Dir returns and reports, for comparing runs.
type dirRun struct {
	Total   string   // the DirTotal as JSON
	Skips   []string // path: error, in order
	Headers []string // path, offset, line, raw header, in order
	Days    []string // path: what the file spent per day and model (DirOptions.Usage), in order
}

func runDir(t *testing.T, root string, o stats.DirOptions) dirRun {
	t.Helper()
	var r dirRun
	o.Skip = func(p string, err error) { r.Skips = append(r.Skips, p+": "+err.Error()) }
	o.Header = func(p string, h jsonl.Entry) {
		r.Headers = append(r.Headers, fmt.Sprintf("%s @%d:%d %s", p, h.Offset, h.Line, h.Raw))
	}
	o.Usage = func(f *stats.FileUsage) { r.Days = append(r.Days, fmt.Sprintf("%s: %+v", f.Path, f.Days)) }
	total, err := stats.Dir(context.Background(), root, o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(total)
	if err != nil {
		t.Fatal(err)
	}
	r.Total = string(b)
	return r
}

// assistant is a message line with a usage whose costs do not add up
// exactly in floating point.
func assistant(id, parent, model string, in int, cost float64) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"assistant","provider":"prov","model":%q,"usage":{"input":%d,"output":3,"cacheRead":1,"cacheWrite":0,"cost":{"input":%v,"output":0.1,"cacheRead":0.2,"cacheWrite":0.3}}}}`,
		id, p, model, in, cost)
}

// old back-dates a file out of the index's racy window.
func old(t *testing.T, path string) {
	t.Helper()
	at := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

func writeOld(t *testing.T, path, data string) {
	t.Helper()
	testenv.WriteFile(t, path, data)
	old(t, path)
}

// indexFiles returns the stats index files under cache.
func indexFiles(t *testing.T, cache string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(cache, "stats-index", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDirIndexMatchesScan changes a store behind the stats index's back
// in every way a file can change and checks that Dir with the index gives
// exactly what a scan without it gives: totals to the bit, skipped files
// and headers.
func TestDirIndexMatchesScan(t *testing.T) {
	for _, w := range []int{3, 4096} {
		t.Run(fmt.Sprintf("window %d", w), func(t *testing.T) {
			defer stats.SetWindow(w)()
			testDirIndexMatchesScan(t)
		})
	}
}

func testDirIndexMatchesScan(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	cache := t.TempDir()
	p, q := filepath.Join(root, "--p--"), filepath.Join(root, "--q--")
	for i := range 6 {
		writeOld(t, filepath.Join(p, fmt.Sprintf("s%d.jsonl", i)), testenv.Lines(testenv.PiHeader,
			assistant("a", "", "m1", 100+i, 0.1*float64(i+1)), assistant("b", "a", fmt.Sprintf("m%d", i%3), 7, 0.7)))
	}
	writeOld(t, filepath.Join(q, "noheader.jsonl"), testenv.Lines(assistant("a", "", "m1", 1, 0.1)))
	writeOld(t, filepath.Join(q, "v1.jsonl"), testenv.Lines(`{"type":"session","id":"v1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`,
		`{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"q"}}`,
		`{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","provider":"prov","model":"m1","usage":{"input":5,"output":1,"cost":{"input":0.3}}}}`))
	writeOld(t, filepath.Join(q, "blank.jsonl"), "\n\n"+testenv.Lines(testenv.PiHeader, assistant("a", "", "m2", 9, 0.9)))
	// Directories whose files are not together in path order.
	writeOld(t, filepath.Join(root, "a.jsonl"), testenv.Lines(testenv.PiHeader, assistant("a", "", "m3", 2, 0.02)))
	writeOld(t, filepath.Join(p, "nested", "n.jsonl"), testenv.Lines(testenv.PiHeader, assistant("a", "", "m3", 3, 0.03)))
	writeOld(t, filepath.Join(root, "zz.jsonl"), testenv.Lines(testenv.PiHeader, assistant("a", "", "m1", 4, 0.04)))
	withIndex := stats.DirOptions{CacheDir: cache}
	scan := stats.DirOptions{NoIndex: true, CacheDir: cache}

	check := func(step string) {
		t.Helper()
		want := runDir(t, root, scan)
		for pass := range 2 { // the run that refreshes the index, then one from it
			if diff := cmp.Diff(want, runDir(t, root, withIndex), usageOpt); diff != "" {
				t.Errorf("%s, run %d with the index (-scan +index):\n%s", step, pass+1, diff)
			}
		}
	}
	check("first run")
	if n := len(indexFiles(t, cache)); n != 4 {
		t.Fatalf("%d index files, want one per directory (4)", n)
	}

	writeOld(t, filepath.Join(p, "added.jsonl"), testenv.Lines(testenv.PiHeader, assistant("a", "", "new-model", 11, 0.11)))
	check("file added")

	grown := filepath.Join(p, "s1.jsonl")
	data, err := os.ReadFile(grown)
	if err != nil {
		t.Fatal(err)
	}
	writeOld(t, grown, string(data)+assistant("c", "b", "m1", 1000, 1.5)+"\n")
	check("file grown")

	// Replaced by another file of the same size and modification time:
	// only the identity and change time tell.
	replaced := filepath.Join(p, "s2.jsonl")
	st, err := os.Stat(replaced)
	if err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(replaced)
	if err != nil {
		t.Fatal(err)
	}
	other := bytes.Replace(data, []byte(`"input":102`), []byte(`"input":987`), 1)
	if bytes.Equal(other, data) || len(other) != len(data) {
		t.Fatal("the replacement is not a same-size change")
	}
	tmp := replaced + ".tmp"
	if err := os.WriteFile(tmp, other, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, replaced); err != nil {
		t.Fatal(err)
	}
	check("file replaced with the same size and time")

	if err := os.Remove(filepath.Join(p, "s3.jsonl")); err != nil {
		t.Fatal(err)
	}
	check("file deleted")

	if err := os.Rename(filepath.Join(p, "s4.jsonl"), filepath.Join(q, "moved.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(p, "s5.jsonl"), filepath.Join(p, "s0.jsonl")); err != nil {
		t.Fatal(err)
	}
	check("files renamed, one onto another")

	// A damaged index: a byte of each line's payload changed, and a torn
	// last line.
	ixs := indexFiles(t, cache)
	for _, ix := range ixs {
		b, err := os.ReadFile(ix)
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte(`"entries":2,`), []byte(`"entries":5,`))
		b = append(b, `{"name":"s0.jsonl","size":`...)
		if err := os.WriteFile(ix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	check("damaged index")

	// A foreign index: --q--'s index in place of --p--'s, and a garbage
	// file in place of --q--'s.
	var pIx, qIx string
	for _, ix := range ixs {
		b, err := os.ReadFile(ix)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.Contains(string(b), `--p--"}`):
			pIx = ix
		case strings.Contains(string(b), `--q--"}`):
			qIx = ix
		}
	}
	b, err := os.ReadFile(qIx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pIx, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(qIx, []byte("not an index\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check("foreign and garbage indexes")

	// The index files are private.
	for _, ix := range indexFiles(t, cache) {
		fi, err := os.Stat(ix)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", ix, fi.Mode())
		}
	}
	if fi, err := os.Stat(filepath.Join(cache, "stats-index")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("index directory: %v %v", fi, err)
	}
}

// countFS counts the reads of session files.
type countFS struct {
	vfs.FS
	reads atomic.Int64
}

func (c *countFS) count(name string) {
	if strings.HasSuffix(name, ".jsonl") {
		c.reads.Add(1)
	}
}

func (c *countFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	c.count(name)
	return c.FS.OpenFile(name, flag, perm)
}

func (c *countFS) ReadFile(name string) ([]byte, error) {
	c.count(name)
	return c.FS.ReadFile(name)
}

// TestDirIndexReadsNoSessionFile checks that a second Dir over an
// unchanged store reads no session file, but for one modified within the
// racy window, which is never cached; with windows of 2 files, so that
// directories are done across windows.
func TestDirIndexReadsNoSessionFile(t *testing.T) {
	defer stats.SetWindow(2)()
	root := t.TempDir()
	cache := t.TempDir()
	for i := range 5 {
		writeOld(t, filepath.Join(root, "--p--", fmt.Sprintf("s%d.jsonl", i)), testenv.Lines(testenv.PiHeader, assistant("a", "", "m", i, 0.1)))
	}
	writeOld(t, filepath.Join(root, "--p--", "noheader.jsonl"), "{}\n")
	writeOld(t, filepath.Join(root, "a.jsonl"), testenv.Lines(testenv.PiHeader, assistant("a", "", "m", 1, 0.1)))
	writeOld(t, filepath.Join(root, "--p--", "sub", "b.jsonl"), testenv.Lines(testenv.PiHeader, assistant("a", "", "m", 1, 0.1)))
	writeOld(t, filepath.Join(root, "z.jsonl"), testenv.Lines(testenv.PiHeader, assistant("a", "", "m", 1, 0.1)))
	testenv.WriteFile(t, filepath.Join(root, "--p--", "recent.jsonl"), testenv.Lines(testenv.PiHeader, assistant("a", "", "m", 1, 0.2)))

	fsys := &countFS{FS: vfs.OS()}
	o := stats.DirOptions{FS: fsys, CacheDir: cache}
	first := runDir(t, root, o)
	if n := fsys.reads.Load(); n != 10 {
		t.Errorf("first run read %d session files, want 10", n)
	}
	fsys.reads.Store(0)
	second := runDir(t, root, o)
	if n := fsys.reads.Load(); n != 1 {
		t.Errorf("second run read %d session files, want 1 (the recent one)", n)
	}
	if diff := cmp.Diff(first, second, usageOpt); diff != "" {
		t.Errorf("second run (-first +second):\n%s", diff)
	}
	fsys.reads.Store(0)
	o.NoIndex = true
	if diff := cmp.Diff(first, runDir(t, root, o), usageOpt); diff != "" {
		t.Errorf("without the index (-index +scan):\n%s", diff)
	}
	if n := fsys.reads.Load(); n != 10 {
		t.Errorf("a run without the index read %d session files, want 10", n)
	}
}

// TestDirIndexNotInStore checks that no index is kept inside the store,
// even when the cache directory is there.
func TestDirIndexNotInStore(t *testing.T) {
	root := t.TempDir()
	writeOld(t, filepath.Join(root, "--p--", "s.jsonl"), testenv.Lines(testenv.PiHeader, assistant("a", "", "m", 1, 0.1)))
	cache := filepath.Join(root, "cache")
	runDir(t, root, stats.DirOptions{CacheDir: cache})
	if _, err := os.Lstat(cache); !os.IsNotExist(err) {
		t.Errorf("a cache directory inside the store was written: %v", err)
	}
}
