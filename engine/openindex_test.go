package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	generate "github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/tree"
)

// indexFixture is a generated session file aged past the racy window, and
// a cache directory of its own.
type indexFixture struct {
	t     *testing.T
	path  string
	cache string
	uses  []engine.OffsetIndexUse
}

func newIndexFixture(t *testing.T, entries int, seed uint64) *indexFixture {
	t.Helper()
	skipWithoutOffsetIndex(t)
	return makeIndexFixture(t, entries, seed)
}

// skipWithoutOffsetIndex skips a test of the offset index where none is
// kept.
func skipWithoutOffsetIndex(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("no offset index on Windows, whose stat has no inode (TestOffsetIndexNoFileID)")
	}
}

func makeIndexFixture(t *testing.T, entries int, seed uint64) *indexFixture {
	t.Helper()
	dir := t.TempDir()
	f := &indexFixture{t: t, path: filepath.Join(dir, "s.jsonl"), cache: t.TempDir()}
	if _, err := generate.WriteFile(f.path, generate.Options{Seed: seed, Entries: entries, ImageEvery: -1}); err != nil {
		t.Fatal(err)
	}
	f.age()
	return f
}

// age sets the file's modification time an hour back, so that it may be
// indexed.
func (f *indexFixture) age() {
	f.t.Helper()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(f.path, old, old); err != nil {
		f.t.Fatal(err)
	}
}

// open opens the file read-only with the offset index (files of any size
// are indexed) and returns how the index was used.
func (f *indexFixture) open() (*engine.Session, engine.OffsetIndexUse) {
	f.t.Helper()
	var use engine.OffsetIndexUse = -1
	opts := engine.WithOffsetIndexTest(engine.StoreOptions{CacheDir: f.cache}, 1,
		func(u engine.OffsetIndexUse) { use = u })
	s, err := openStore(f.t, opts).Open(context.Background(), f.path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		f.t.Fatal(err)
	}
	f.uses = append(f.uses, use)
	return s, use
}

// check opens the file with the index and without it and fails unless
// both sessions are the same; it returns how the index was used.
func (f *indexFixture) check() engine.OffsetIndexUse {
	f.t.Helper()
	s, use := f.open()
	defer s.Close()
	ref, err := openStore(f.t, engine.StoreOptions{NoOffsetIndex: true, CacheDir: f.cache}).Open(context.Background(), f.path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		f.t.Fatal(err)
	}
	defer ref.Close()
	if d := sessionDiff(s, ref); d != "" {
		f.t.Fatalf("open with the offset index (use %d) differs from a full parse: %s", use, d)
	}
	return use
}

// sessionDiff describes the first difference between two sessions.
func sessionDiff(a, b *engine.Session) string {
	ea, eb := a.Entries(), b.Entries()
	if len(ea) != len(eb) {
		return fmt.Sprintf("%d entries, want %d", len(ea), len(eb))
	}
	for i := range ea {
		x, y := ea[i], eb[i]
		if !bytes.Equal(x.Raw, y.Raw) || x.Offset != y.Offset || x.Line != y.Line || x.Type != y.Type ||
			x.ID != y.ID || x.IDKind != y.IDKind || x.ParentID != y.ParentID || x.ParentKind != y.ParentKind ||
			x.Timestamp != y.Timestamp || x.Role != y.Role || !bytes.Equal(x.Message(), y.Message()) {
			return fmt.Sprintf("entry %d: %+v, want %+v", i, *x, *y)
		}
	}
	if a.Header().ID != b.Header().ID {
		return "header differs"
	}
	if a.Recovery() != b.Recovery() {
		return fmt.Sprintf("recovery %+v, want %+v", a.Recovery(), b.Recovery())
	}
	var la, lb string
	var ka, kb engine.Kind
	a.Index(func(ix *tree.Index) { la, ka = ix.Leaf() })
	b.Index(func(ix *tree.Index) { lb, kb = ix.Leaf() })
	if la != lb || ka != kb {
		return fmt.Sprintf("leaf %q, want %q", la, lb)
	}
	ca, cb := a.Context(), b.Context()
	if len(ca.Messages) != len(cb.Messages) {
		return fmt.Sprintf("context of %d messages, want %d", len(ca.Messages), len(cb.Messages))
	}
	return ""
}

func (f *indexFixture) indexPath() string { return engine.OffsetIndexPath(f.cache, f.path) }

func (f *indexFixture) mustUse(got, want engine.OffsetIndexUse, what string) {
	f.t.Helper()
	if got != want {
		f.t.Fatalf("%s: offset index use %d, want %d", what, got, want)
	}
}

func TestOffsetIndexReuse(t *testing.T) {
	t.Parallel()
	f := newIndexFixture(t, 400, 1)
	f.mustUse(f.check(), engine.OffsetIndexUnused, "first open")
	st, err := os.Stat(f.indexPath())
	if err != nil {
		t.Fatalf("no offset index after the first open: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("offset index mode %v, want 0600", st.Mode().Perm())
	}
	if dst, err := os.Stat(filepath.Dir(f.indexPath())); err != nil || dst.Mode().Perm() != 0o700 {
		t.Errorf("offset index directory: %v, %v; want mode 0700", dst, err)
	}
	f.mustUse(f.check(), engine.OffsetIndexExact, "second open")
	f.mustUse(f.check(), engine.OffsetIndexExact, "third open")
	// Nothing was written next to the session.
	names, err := os.ReadDir(filepath.Dir(f.path))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 {
		t.Errorf("session directory holds %d files, want only the session", len(names))
	}
}

// appendLines appends text to the session file.
func (f *indexFixture) appendLines(text string) {
	f.t.Helper()
	fh, err := os.OpenFile(f.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := fh.WriteString(text); err != nil {
		f.t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		f.t.Fatal(err)
	}
}

func lastID(t *testing.T, path string) string {
	t.Helper()
	s, err := openStore(t, engine.StoreOptions{NoOffsetIndex: true}).Open(context.Background(), path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id, _ := s.LeafID()
	return id
}

func ixUserLine(id, parent, text string) string {
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":"2026-06-01T00:00:00.000Z","message":{"role":"user","content":%q,"timestamp":0}}`+"\n", id, parent, text)
}

func TestOffsetIndexGrownFile(t *testing.T) {
	t.Parallel()
	f := newIndexFixture(t, 300, 2)
	f.check()
	leaf := lastID(t, f.path)
	f.appendLines(ixUserLine("g0000001", leaf, "one more") + ixUserLine("g0000002", "g0000001", "and another"))
	f.mustUse(f.check(), engine.OffsetIndexPrefix, "open after an append")
	// The appended file is young: its index is not rewritten, and the
	// prefix is used again.
	f.mustUse(f.check(), engine.OffsetIndexPrefix, "second open after an append")
	f.age()
	f.mustUse(f.check(), engine.OffsetIndexPrefix, "open once the append is old")
	f.mustUse(f.check(), engine.OffsetIndexExact, "open after the index was rewritten")

	// Appended bytes that are not a line of an object (a torn line, a
	// malformed one, blank lines) read as a full parse reads them.
	for _, tail := range []string{"\n\n" + ixUserLine("g0000003", "g0000002", "after blanks"), "not json\n", `{"type":"message","id":"g00`} {
		f.age()
		f.check() // whatever it is, the same as a full parse
		f.appendLines(tail)
		f.check()
	}
}

// indexChanges are changes to an indexed file after which its offset
// index must not be used.
func indexChanges() map[string]func(t *testing.T, f *indexFixture) {
	data := func(t *testing.T, f *indexFixture) []byte {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return map[string]func(t *testing.T, f *indexFixture){
		// The last line rewritten in place, same size, the modification
		// time put back.
		"last line modified, same size and time": func(t *testing.T, f *indexFixture) {
			st, _ := os.Stat(f.path)
			fh, err := os.OpenFile(f.path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			b := data(t, f)
			i := bytes.LastIndex(b[:len(b)-1], []byte{'\n'}) + 1
			j := bytes.Index(b[i:], []byte(`"id":"`)) + i + len(`"id":"`)
			c := b[j] ^ 1
			if _, err := fh.WriteAt([]byte{c}, int64(j)); err != nil {
				t.Fatal(err)
			}
			fh.Close()
			os.Chtimes(f.path, st.ModTime(), st.ModTime())
		},
		// Text inside the last line's message, not its envelope.
		"last line's message modified, same size and time": func(t *testing.T, f *indexFixture) {
			st, _ := os.Stat(f.path)
			b := data(t, f)
			i := bytes.LastIndex(b[:len(b)-1], []byte{'\n'}) + 1
			j := bytes.LastIndex(b[i:], []byte(`":"`)) + i + 3
			if c := b[j] | 0x20; c < 'a' || c > 'z' {
				t.Fatalf("no letter to change in %q", b[i:])
			}
			b[j] ^= 0x20
			if err := os.WriteFile(f.path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(f.path, st.ModTime(), st.ModTime())
		},
		"first line modified, same size and time": func(t *testing.T, f *indexFixture) {
			st, _ := os.Stat(f.path)
			b := data(t, f)
			j := bytes.Index(b, []byte(`"id":"`)) + len(`"id":"`)
			b[j] ^= 1
			if err := os.WriteFile(f.path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(f.path, st.ModTime(), st.ModTime())
		},
		"a middle line modified": func(t *testing.T, f *indexFixture) {
			b := data(t, f)
			j := bytes.Index(b[len(b)/2:], []byte(`"id":"`)) + len(b)/2 + len(`"id":"`)
			b[j] ^= 1
			if err := os.WriteFile(f.path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"truncated to a line boundary": func(t *testing.T, f *indexFixture) {
			b := data(t, f)
			i := bytes.LastIndex(b[:len(b)-1], []byte{'\n'}) + 1
			if err := os.Truncate(f.path, int64(i)); err != nil {
				t.Fatal(err)
			}
		},
		"truncated mid-line": func(t *testing.T, f *indexFixture) {
			if err := os.Truncate(f.path, int64(len(data(t, f))-10)); err != nil {
				t.Fatal(err)
			}
		},
		"truncated then grown back to its size": func(t *testing.T, f *indexFixture) {
			b := data(t, f)
			i := bytes.LastIndex(b[:len(b)-1], []byte{'\n'}) + 1
			if err := os.Truncate(f.path, int64(i)); err != nil {
				t.Fatal(err)
			}
			pad := len(b) - i - 1
			f.appendLines(fmt.Sprintf(`{"type":"custom","customType":"x","data":%q}`, bytes.Repeat([]byte("y"), pad-len(`{"type":"custom","customType":"x","data":""}`))) + "\n")
		},
		"replaced by another file of the same size and time": func(t *testing.T, f *indexFixture) {
			st, _ := os.Stat(f.path)
			b := data(t, f)
			// Same bytes but one id, in a new file renamed over it.
			j := bytes.Index(b[len(b)/3:], []byte(`"id":"`)) + len(b)/3 + len(`"id":"`)
			b[j] ^= 1
			tmp := f.path + ".new"
			if err := os.WriteFile(tmp, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, f.path); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(f.path, st.ModTime(), st.ModTime())
		},
		"replaced by a different session": func(t *testing.T, f *indexFixture) {
			if _, err := generate.WriteFile(f.path+".new", generate.Options{Seed: 99, Entries: 300, ImageEvery: -1}); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(f.path+".new", f.path); err != nil {
				t.Fatal(err)
			}
		},
	}
}

func TestOffsetIndexNeverStale(t *testing.T) {
	t.Parallel()
	neverStale(t, (*indexFixture).check)
}

// neverStale makes each change of indexChanges to an indexed file and
// fails unless read (which checks what it read against a full parse)
// then leaves the index unused.
func neverStale(t *testing.T, read func(*indexFixture) engine.OffsetIndexUse) {
	for name, change := range indexChanges() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newIndexFixture(t, 300, 3)
			read(f)
			f.mustUse(read(f), engine.OffsetIndexExact, "before the change")
			change(t, f)
			if u := read(f); u != engine.OffsetIndexUnused {
				t.Fatalf("after the change the offset index was used (%d)", u)
			}
		})
	}
}

// readContext reads the file's context with ReadContext and the offset
// index, fails unless it is a full parse's, and returns how the index was
// used.
func (f *indexFixture) readContext() engine.OffsetIndexUse {
	f.t.Helper()
	var use engine.OffsetIndexUse = -1
	opts := engine.WithOffsetIndexTest(engine.StoreOptions{CacheDir: f.cache}, 1, func(u engine.OffsetIndexUse) { use = u })
	fc, err := engine.ReadContextIn(context.Background(), openStore(f.t, opts), f.path, "")
	if err != nil {
		f.t.Fatal(err)
	}
	ref, err := openStore(f.t, engine.StoreOptions{NoOffsetIndex: true}).Open(context.Background(), f.path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		f.t.Fatal(err)
	}
	defer ref.Close()
	var got, want bytes.Buffer
	if err := render.Context(&got, fc.Context); err != nil {
		f.t.Fatal(err)
	}
	if err := render.Context(&want, ref.Context()); err != nil {
		f.t.Fatal(err)
	}
	if got.String() != want.String() {
		f.t.Fatalf("ReadContext (offset index use %d) differs from a full parse", use)
	}
	return use
}

func TestReadContextOffsetIndex(t *testing.T) {
	t.Parallel()
	f := newIndexFixture(t, 300, 5)
	// A branch off an early entry, and an id used again: parents that are
	// not the line before, found through the map of ids.
	data, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	var early struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(bytes.SplitN(data, []byte("\n"), 4)[2], &early); err != nil || early.ID == "" {
		t.Fatalf("no id on the third line: %v", err)
	}
	f.appendLines(ixUserLine("b0000001", early.ID, "a branch off an early entry") +
		ixUserLine("b0000002", "b0000001", "on the branch") + ixUserLine(early.ID, "b0000002", "an id used again"))
	f.age()
	f.mustUse(f.readContext(), engine.OffsetIndexUnused, "first read")
	fromRead, err := os.ReadFile(f.indexPath())
	if err != nil {
		t.Fatalf("the first read kept no index: %v", err)
	}
	f.mustUse(f.readContext(), engine.OffsetIndexExact, "second read")
	// An index that Open kept serves ReadContext too, and the reverse.
	// Open takes the parent positions from the session's own tree, the
	// read from a map of its own: the two indexes are the same bytes.
	if err := os.Remove(f.indexPath()); err != nil {
		t.Fatal(err)
	}
	f.check()
	fromOpen, err := os.ReadFile(f.indexPath())
	if err != nil {
		t.Fatalf("Open kept no index: %v", err)
	}
	if !bytes.Equal(fromOpen, fromRead) {
		t.Errorf("the index Open kept (%d bytes) differs from the one ReadContext kept (%d bytes)", len(fromOpen), len(fromRead))
	}
	f.mustUse(f.readContext(), engine.OffsetIndexExact, "read after Open")
	neverStale(t, (*indexFixture).readContext)
}

func TestOffsetIndexDamaged(t *testing.T) {
	t.Parallel()
	damage := map[string]func([]byte) []byte{
		"garbage":            func([]byte) []byte { return []byte("garbage\n") },
		"empty":              func([]byte) []byte { return nil },
		"cut short":          func(b []byte) []byte { return b[:len(b)/2] },
		"one byte flipped":   func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b },
		"header only":        func(b []byte) []byte { return b[:30] },
		"last 4 bytes wrong": func(b []byte) []byte { b[len(b)-1]++; return b },
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fx := newIndexFixture(t, 200, 4)
			fx.check()
			b, err := os.ReadFile(fx.indexPath())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(fx.indexPath(), f(b), 0o600); err != nil {
				t.Fatal(err)
			}
			fx.mustUse(fx.check(), engine.OffsetIndexUnused, "damaged index")
			fx.mustUse(fx.check(), engine.OffsetIndexExact, "rewritten index")
		})
	}
	t.Run("another file's index", func(t *testing.T) {
		t.Parallel()
		a := newIndexFixture(t, 200, 5)
		b := newIndexFixture(t, 200, 6)
		b.cache = a.cache
		a.check()
		b.check()
		idx, err := os.ReadFile(a.indexPath())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(b.indexPath(), idx, 0o600); err != nil {
			t.Fatal(err)
		}
		b.mustUse(b.check(), engine.OffsetIndexUnused, "another file's index")
	})
}

func TestOffsetIndexOff(t *testing.T) {
	t.Parallel()
	f := newIndexFixture(t, 200, 7)
	s, err := openStore(t, engine.WithOffsetIndexTest(
		engine.StoreOptions{CacheDir: f.cache, NoOffsetIndex: true}, 1, func(engine.OffsetIndexUse) {
			t.Error("NoOffsetIndex: the offset index was looked for")
		})).Open(context.Background(), f.path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(f.indexPath()); err == nil {
		t.Error("NoOffsetIndex: an offset index was written")
	}
	// A young file is not indexed.
	now := time.Now()
	if err := os.Chtimes(f.path, now, now); err != nil {
		t.Fatal(err)
	}
	f.check()
	if _, err := os.Stat(f.indexPath()); err == nil {
		t.Error("a file modified just now was indexed")
	}
	// A write-mode open neither reads nor writes it.
	f.age()
	w, err := openStore(t, engine.WithOffsetIndexTest(
		engine.StoreOptions{CacheDir: f.cache}, 1, func(engine.OffsetIndexUse) {
			t.Error("write-mode open looked for the offset index")
		})).Open(context.Background(), f.path, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
}

// TestOffsetIndexNoFileID checks that where a file's stat carries no
// identity (Windows), opens neither use nor write an offset index: a
// replaced file of the same size and time could pass for the indexed one.
func TestOffsetIndexNoFileID(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "windows" {
		t.Skip("Unix stat has an inode: the other offset index tests cover it")
	}
	f := makeIndexFixture(t, 400, 1)
	for i := range 2 {
		if use := f.check(); use == engine.OffsetIndexExact || use == engine.OffsetIndexPrefix {
			t.Errorf("open %d used an offset index (%d)", i+1, use)
		}
	}
	if _, err := os.Stat(f.indexPath()); err == nil {
		t.Error("an offset index was written without a file identity")
	}
}
