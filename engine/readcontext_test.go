package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/internal/testenv"
	generate "github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/layout/vfs"
)

// openContext is the context ReadContext must give: a read-only Open's,
// as JSON.
func openContext(t *testing.T, path, leaf string) string {
	t.Helper()
	s, err := openStore(t, engine.StoreOptions{NoOffsetIndex: true}).Open(context.Background(), path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := s.Context()
	if leaf != "" {
		c = s.ContextAt(compaction.LeafID(leaf))
	}
	return contextJSON(t, c)
}

func contextJSON(t *testing.T, c compaction.Context) string {
	t.Helper()
	var b bytes.Buffer
	if err := render.Context(&b, c); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// readContext returns ReadContext's context as JSON, checking its header
// and file against a read-only Open's.
func readContext(t *testing.T, path, leaf string, opts engine.StoreOptions) string {
	t.Helper()
	fc, err := engine.ReadContextIn(context.Background(), openStore(t, opts), path, leaf)
	if err != nil {
		t.Fatalf("ReadContext(%s, %q): %v", path, leaf, err)
	}
	s, err := openStore(t, engine.StoreOptions{NoOffsetIndex: true}).Open(context.Background(), path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A file without a header gets a fresh one, with a new id, each time.
	fromFile := bytes.Contains(data, s.Header().Raw)
	if fc.File != s.SessionFile() || fromFile && (!bytes.Equal(fc.Header.Raw, s.Header().Raw) || fc.Header.Version != s.Header().Version) {
		t.Fatalf("ReadContext: file %s header %s, Open: %s %s", fc.File, fc.Header.Raw, s.SessionFile(), s.Header().Raw)
	}
	return contextJSON(t, fc.Context)
}

// openContexts returns a read-only Open's contexts, as JSON, at the
// file's leaf ("") and at some of its entries.
func openContexts(t *testing.T, path string) map[string]string {
	t.Helper()
	s, err := openStore(t, engine.StoreOptions{NoOffsetIndex: true}).Open(context.Background(), path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[string]string{"": contextJSON(t, s.Context())}
	es := s.Entries()
	for i := 0; i < len(es); i += max(1, len(es)/12) {
		if id := es[i].ID; id != "" {
			out[id] = contextJSON(t, s.ContextAt(compaction.LeafID(id)))
		}
	}
	return out
}

// contextFiles writes the pi corpus's session files and generated
// sessions of each format version asked for into a new directory, and
// returns their paths.
func contextFiles(t *testing.T, versions ...int) []string {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i, data := range testenv.CorpusFiles(t, testenv.Suffix(".jsonl"), "pi", "cases") {
		p := filepath.Join(dir, fmt.Sprintf("corpus-%d.jsonl", i))
		testenv.WriteFile(t, p, string(data))
		files = append(files, p)
	}
	for seed := uint64(1); seed <= 3; seed++ {
		for _, v := range versions {
			p := filepath.Join(dir, fmt.Sprintf("gen-%d-v%d.jsonl", seed, v))
			if _, err := generate.WriteFile(p, generate.Options{Seed: seed, Entries: 300, Version: v, ImageEvery: 50, ToolResultMax: 3000}); err != nil {
				t.Fatal(err)
			}
			files = append(files, p)
		}
	}
	return files
}

func TestReadContextMatchesOpen(t *testing.T) {
	t.Parallel()
	files := contextFiles(t, 3, 1)
	for _, p := range files {
		if _, err := engine.OpenFile(context.Background(), p, engine.OpenOptions{ReadOnly: true}); err != nil {
			// A corpus file that does not open: ReadContext gives Open's error.
			if _, err2 := engine.ReadContext(context.Background(), p, "", engine.OpenOptions{}); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("%s: ReadContext error %v, Open's %v", filepath.Base(p), err2, err)
			}
			continue
		}
		for leaf, want := range openContexts(t, p) {
			if diff := cmp.Diff(want, readContext(t, p, leaf, engine.StoreOptions{})); diff != "" {
				t.Errorf("%s at leaf %q: ReadContext differs from Open (-Open +ReadContext):\n%s", filepath.Base(p), leaf, diff)
			}
		}
	}
}

// TestReadContextIndexedMatchesOpen is TestReadContextMatchesOpen with
// the offset index: a first read keeps it, and the later ones read the
// context from it (no map of ids: the branch is walked by position, the
// leaf looked for entry by entry), at the leaf and at other entries.
func TestReadContextIndexedMatchesOpen(t *testing.T) {
	t.Parallel()
	skipWithoutOffsetIndex(t)
	files := contextFiles(t, 3)
	old := time.Now().Add(-time.Hour) // old enough to be indexed
	indexed := 0
	for _, p := range files {
		if _, err := openStore(t, engine.StoreOptions{NoOffsetIndex: true}).Open(context.Background(), p, engine.OpenOptions{ReadOnly: true}); err != nil {
			continue // TestReadContextMatchesOpen checks the error
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		var use engine.OffsetIndexUse = -1
		opts := engine.WithOffsetIndexTest(engine.StoreOptions{CacheDir: t.TempDir()}, 1, func(u engine.OffsetIndexUse) { use = u })
		readContext(t, p, "", opts) // keeps the index, when the file may be indexed
		for leaf, want := range openContexts(t, p) {
			if diff := cmp.Diff(want, readContext(t, p, leaf, opts)); diff != "" {
				t.Errorf("%s at leaf %q: ReadContext with the offset index (use %d) differs from Open (-Open +ReadContext):\n%s",
					filepath.Base(p), leaf, use, diff)
			}
		}
		if use == engine.OffsetIndexExact {
			indexed++
			if _, err := engine.ReadContextIn(context.Background(), openStore(t, opts), p, "nope"); !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("%s: unknown leaf with the offset index: err = %v, want ErrNotFound", filepath.Base(p), err)
			}
		} else if strings.HasPrefix(filepath.Base(p), "gen-") {
			t.Errorf("%s: the offset index was not used (%d)", filepath.Base(p), use)
		}
	}
	if indexed < len(files)/2 {
		t.Errorf("the offset index served %d of %d files", indexed, len(files))
	}
}

// TestReadContextIndexedRepeatedIDs reads contexts from the offset index
// of a file whose ids repeat and whose parents loop: the leaf asked for
// is the last entry with its id, and each branch is the tree's, as Open
// gives them.
func TestReadContextIndexedRepeatedIDs(t *testing.T) {
	t.Parallel()
	skipWithoutOffsetIndex(t)
	p := filepath.Join(t.TempDir(), "s.jsonl")
	testenv.WriteFile(t, p, testenv.Lines(`{"type":"session","version":3,"id":"s","cwd":"/w"}`,
		testenv.PiMessage("a", ""), testenv.PiMessage("b", "a"), testenv.PiMessage("c", "b"),
		testenv.PiMessage("b", "c"), // b again, under c: a loop b -> c -> b
		testenv.PiMessage("d", "a"), testenv.PiMessage("a", "d"), testenv.PiMessage("e", "a")))
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	var use engine.OffsetIndexUse = -1
	opts := engine.WithOffsetIndexTest(engine.StoreOptions{CacheDir: t.TempDir()}, 1, func(u engine.OffsetIndexUse) { use = u })
	readContext(t, p, "", opts) // keeps the index
	for _, leaf := range []string{"", "a", "b", "c", "d", "e"} {
		if diff := cmp.Diff(openContext(t, p, leaf), readContext(t, p, leaf, opts)); diff != "" {
			t.Errorf("leaf %q: ReadContext with the offset index differs from Open (-Open +ReadContext):\n%s", leaf, diff)
		}
		if use != engine.OffsetIndexExact {
			t.Fatalf("leaf %q: the offset index was not used (%d)", leaf, use)
		}
	}
}

func TestReadContextUnknownLeaf(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	testenv.WriteFile(t, p, testenv.Lines(`{"type":"session","version":3,"id":"s","cwd":"/w"}`, testenv.PiMessage("a", "")))
	_, err := engine.ReadContext(context.Background(), p, "nope", engine.OpenOptions{})
	if !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

// countingFS counts the bytes read with ReadAt and runs hook before the
// first ReadAt of each opened file. Its files allow parallel ReadAt
// calls, as io.ReaderAt's do.
type countingFS struct {
	vfs.FS
	mu     sync.Mutex
	readAt int
	reads  int // ReadAt calls
	hook   func()
}

func (c *countingFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, fs: c}, nil
}

type countingFile struct {
	vfs.File
	fs     *countingFS
	hooked bool
}

func (f *countingFile) ReadAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	if !f.hooked && f.fs.hook != nil {
		f.hooked = true
		f.fs.hook()
	}
	f.fs.readAt += len(b)
	f.fs.reads++
	f.fs.mu.Unlock()
	return f.File.ReadAt(b, off)
}

func TestReadContextReadsBackOnlyTheContext(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if _, err := generate.WriteFile(p, generate.Options{Seed: 7, Entries: 6500, ImageEvery: -1, ToolResultMin: 200, ToolResultMax: 1500}); err != nil {
		t.Fatal(err)
	}
	want := openContext(t, p, "")
	cfs := &countingFS{FS: vfs.OS()}
	if got := readContext(t, p, "", engine.StoreOptions{FS: cfs}); got != want {
		t.Fatal("ReadContext differs from Open")
	}
	st, _ := os.Stat(p)
	// The generated session compacts after 5,000 entries: the context is
	// a small part of the file, and only it is read back.
	if cfs.readAt == 0 || int64(cfs.readAt) > st.Size()/3 {
		t.Fatalf("read back %d bytes of a %d-byte file", cfs.readAt, st.Size())
	}
}

// TestReadContextReadsBackInRuns checks a context whose lines lie apart
// (each followed by an abandoned branch of 100 KB) and add up to more
// than one run of read-back: it is Open's, the branches between its
// lines are not read, and nearby lines are read together.
func TestReadContextReadsBackInRuns(t *testing.T) {
	t.Parallel()
	lines := []string{`{"type":"session","version":3,"id":"s","cwd":"/w"}`}
	message := func(id, parent string, size int) string {
		return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":"2026-03-01T09:00:01.000Z","message":{"role":"user","content":%q,"timestamp":1}}`,
			id, parent, strings.Repeat("y", size))
	}
	context := 0
	for i := 1; i <= 60; i++ {
		parent := fmt.Sprintf("a%d", i-1)
		if i%3 == 0 {
			// An abandoned branch beside the context's next line.
			lines = append(lines, message(fmt.Sprintf("b%d", i), parent, 100<<10))
		}
		l := message(fmt.Sprintf("a%d", i), parent, 50<<10)
		context += len(l)
		lines = append(lines, l)
	}
	lines[1] = strings.Replace(lines[1], `"parentId":"a0"`, `"parentId":null`, 1)
	p := filepath.Join(t.TempDir(), "s.jsonl")
	testenv.WriteFile(t, p, testenv.Lines(lines...))
	want := openContext(t, p, "")
	cfs := &countingFS{FS: vfs.OS()}
	if got := readContext(t, p, "", engine.StoreOptions{FS: cfs, NoOffsetIndex: true}); got != want {
		t.Fatal("ReadContext differs from Open")
	}
	// The context's lines, and none of the 20 branches between them
	// (2 MB), in one read per run of nearby lines, not one per line.
	if cfs.readAt < context || cfs.readAt > context+100<<10 {
		t.Errorf("read back %d bytes for a context of %d", cfs.readAt, context)
	}
	if cfs.reads < 20 || cfs.reads > 30 {
		t.Errorf("read back in %d reads, want one per run of lines (about 20)", cfs.reads)
	}
}

// rewriteRoles rewrites the file at p in place (pi's writeFileSync: the
// same inode, new bytes, the same size), renaming the user role.
func rewriteRoles(t *testing.T, p string) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte(`"role":"user"`), []byte(`"role":"usr!"`))
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestReadContextFileChangedWhileRead(t *testing.T) {
	t.Parallel()
	for name, change := range map[string]func(t *testing.T, p string){
		"rewritten in place": rewriteRoles,
		"rewritten in place, same size and time": func(t *testing.T, p string) {
			// Only the check of each line read back can tell.
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			rewriteRoles(t, p)
			if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		},
		"appended to": func(t *testing.T, p string) {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(testenv.PiMessage("zz-appended", "") + "\n"); err != nil {
				t.Fatal(err)
			}
		},
		"truncated": func(t *testing.T, p string) {
			st, _ := os.Stat(p)
			if err := os.Truncate(p, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "s.jsonl")
			if _, err := generate.WriteFile(p, generate.Options{Seed: 3, Entries: 400, ImageEvery: -1}); err != nil {
				t.Fatal(err)
			}
			changed := false
			cfs := &countingFS{FS: vfs.OS()}
			cfs.hook = func() {
				if !changed {
					changed = true
					change(t, p)
				}
			}
			fc, err := engine.ReadContextIn(context.Background(), openStore(t, engine.StoreOptions{FS: cfs}), p, "")
			if err != nil {
				t.Fatal(err)
			}
			if !changed {
				t.Fatal("the file was never read back")
			}
			// The context is the changed file's, never a mix.
			if got, want := contextJSON(t, fc.Context), openContext(t, p, ""); got != want {
				t.Fatalf("context after the change differs from Open's:\n%.300s\nwant\n%.300s", got, want)
			}
			if strings.HasPrefix(name, "rewritten") && !strings.Contains(contextJSON(t, fc.Context), "usr!") {
				t.Fatal("the rewritten bytes are not in the context")
			}
		})
	}
}
