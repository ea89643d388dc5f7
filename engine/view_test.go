package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

// viewState is what a View and a read-only Session both say of a file,
// the entries' bytes included (a View's read back through Lines).
type viewState struct {
	Header  string
	Name    string
	HasName bool
	Leaf    string
	HasLeaf bool
	Labels  []tree.LabelPair
	Entries []string
	Lines   []int
	Branch  []string
	// Branches holds the branch of every tenth entry's id.
	Branches map[string][]string
}

func raws(es []*engine.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e.Raw)
	}
	return out
}

func sessionState(s *engine.Session) viewState {
	st := viewState{Header: string(s.Header().Raw), Entries: raws(s.Entries()), Branch: raws(s.BranchPath("")), Branches: map[string][]string{}}
	st.Name, st.HasName = s.Name()
	st.Leaf, st.HasLeaf = s.LeafID()
	s.Index(func(ix *tree.Index) {
		st.Labels = ix.Labels()
		for i, e := range ix.Entries() {
			st.Lines = append(st.Lines, e.Line)
			if i%10 == 0 && e.IDKind == engine.KindString {
				st.Branches[e.ID] = nil
			}
		}
	})
	for id := range st.Branches {
		st.Branches[id] = raws(s.BranchPath(id))
	}
	return st
}

func viewLines(t *testing.T, v *engine.View, es []*engine.Entry) []string {
	t.Helper()
	var out []string
	for e, err := range v.Lines(es) {
		if err != nil {
			t.Fatalf("%s: Lines: %v", v.SessionFile(), err)
		}
		out = append(out, string(e.Raw))
	}
	if len(out) != len(es) {
		t.Fatalf("%s: Lines gave %d entries of %d", v.SessionFile(), len(out), len(es))
	}
	return out
}

func viewStateOf(t *testing.T, v *engine.View, ids []string) viewState {
	es := v.Entries()
	st := viewState{Header: string(v.Header().Raw), Entries: viewLines(t, v, es), Branch: viewLines(t, v, v.BranchPath("")), Branches: map[string][]string{}}
	st.Name, st.HasName = v.Name()
	st.Leaf, st.HasLeaf = v.LeafID()
	st.Labels = v.Labels()
	for _, e := range es {
		st.Lines = append(st.Lines, e.Line)
	}
	for _, id := range ids {
		st.Branches[id] = viewLines(t, v, v.BranchPath(id))
	}
	if v.Len() != len(es) {
		t.Errorf("%s: Len %d, Entries %d", v.SessionFile(), v.Len(), len(es))
	}
	return st
}

// TestViewMatchesOpen reads the corpus's files and generated sessions of
// versions 3 and 1 as Views, with and without their offset index, and
// compares everything with a read-only Open: header, name, leaf, labels,
// every entry's bytes and line, the branch of the leaf and of other
// entries; and the errors of the files Open refuses.
func TestViewMatchesOpen(t *testing.T) {
	files := contextFiles(t, 3, 1)
	old := time.Now().Add(-time.Hour) // old enough to be indexed
	for _, p := range files {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		plain := openStore(t, engine.StoreOptions{NoOffsetIndex: true})
		s, err := plain.Open(context.Background(), p, engine.OpenOptions{ReadOnly: true})
		if err != nil {
			if _, verr := plain.View(context.Background(), p); verr == nil || verr.Error() != err.Error() {
				t.Errorf("%s: View error %v, Open's %v", filepath.Base(p), verr, err)
			}
			continue
		}
		want := sessionState(s)
		s.Close()
		opts := []cmp.Option{cmpopts.EquateEmpty()}
		if again, err := plain.Open(context.Background(), p, engine.OpenOptions{ReadOnly: true}); err == nil {
			if string(again.Header().Raw) != want.Header {
				// An empty file: each open makes up a header.
				opts = append(opts, cmpopts.IgnoreFields(viewState{}, "Header"))
			}
			again.Close()
		}
		ids := make([]string, 0, len(want.Branches))
		for id := range want.Branches {
			ids = append(ids, id)
		}
		var use engine.OffsetIndexUse = -1
		indexed := openStore(t, engine.WithOffsetIndexTest(engine.StoreOptions{CacheDir: t.TempDir()}, 1, func(u engine.OffsetIndexUse) { use = u }))
		for i, st := range []*engine.Store{plain, indexed, indexed} {
			v, err := st.View(context.Background(), p)
			if err != nil {
				t.Fatalf("%s: View: %v", filepath.Base(p), err)
			}
			got := viewStateOf(t, v, ids)
			v.Close()
			if diff := cmp.Diff(want, got, opts...); diff != "" {
				t.Errorf("%s, view %d (offset index use %d): View differs from Open (-Open +View):\n%s", filepath.Base(p), i, use, diff)
			}
		}
	}
}

// TestViewLinesAfterRewrite: a file rewritten after the View read it
// (pi rewrites a file it migrates) makes Lines fail naming the file,
// instead of giving other bytes.
func TestViewLinesAfterRewrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n")
	parent := "null"
	for i := range 50 {
		id := fmt.Sprintf("e%07d", i)
		fmt.Fprintf(&b, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hello %d","timestamp":1}}`+"\n", id, parent, i)
		parent = `"` + id + `"`
	}
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := openStore(t, engine.StoreOptions{NoOffsetIndex: true}).View(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	es := v.Entries()
	if es[10].Raw != nil {
		t.Fatalf("a message entry of a View has its bytes: %s", es[10].Raw)
	}
	// The same length, another entry.
	if err := os.WriteFile(p, bytes.ReplaceAll(b.Bytes(), []byte(`"e0000030"`), []byte(`"x0000030"`)), 0o600); err != nil {
		t.Fatal(err)
	}
	n := 0
	var lerr error
	for _, err := range v.Lines(es) {
		if err != nil {
			lerr = err
			break
		}
		n++
	}
	if lerr == nil || !bytes.Contains([]byte(lerr.Error()), []byte(p)) {
		t.Fatalf("Lines after a rewrite: %d entries, err %v; want an error naming %s", n, lerr, p)
	}
}

// TestForkFileMatchesFork: ForkFile writes the bytes Fork writes (the
// same ids and clock), for a branch (the leaf's, another entry's) and for
// every entry, and says what it wrote as the forked session does.
func TestForkFileMatchesFork(t *testing.T) {
	files := contextFiles(t, 3, 1)
	for _, p := range files {
		src, err := openStore(t, engine.StoreOptions{NoOffsetIndex: true}).Open(context.Background(), p, engine.OpenOptions{ReadOnly: true})
		if err != nil {
			continue
		}
		var at []string
		src.Index(func(ix *tree.Index) {
			for i, e := range ix.Entries() {
				if i%17 == 5 && e.IDKind == engine.KindString && !slices.Contains(at, e.ID) {
					at = append(at, e.ID)
				}
			}
		})
		src.Close()
		cases := []engine.ForkOptions{{Branch: true}, {}, {Cwd: "/elsewhere"}}
		for _, id := range at[:min(len(at), 3)] {
			cases = append(cases, engine.ForkOptions{At: id})
		}
		for _, o := range cases {
			fork := func(file bool) (string, *engine.ForkedFile, error) {
				n := 0
				st := openStore(t, engine.StoreOptions{
					Dir:          t.TempDir(),
					Now:          func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) },
					NewSessionID: func() string { return "0196a000-0000-7000-8000-000000000001" },
					NewEntryID:   func() string { n++; return fmt.Sprintf("%08x", n) },
				})
				if !file {
					s, err := st.Fork(context.Background(), p, o)
					if err != nil {
						return "", nil, err
					}
					ff := &engine.ForkedFile{Path: s.SessionFile(), Header: s.Header(), Entries: len(s.Entries())}
					ff.Leaf, ff.HasLeaf = s.LeafID()
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					return readAndRemove(t, ff.Path), ff, nil
				}
				ff, err := st.ForkFile(context.Background(), p, o)
				if err != nil {
					return "", nil, err
				}
				return readAndRemove(t, ff.Path), ff, nil
			}
			want, wantFF, werr := fork(false)
			got, gotFF, gerr := fork(true)
			name := fmt.Sprintf("%s %+v", filepath.Base(p), o)
			if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
				t.Errorf("%s: ForkFile error %v, Fork's %v", name, gerr, werr)
				continue
			}
			if werr != nil {
				continue
			}
			if got != want {
				t.Errorf("%s: ForkFile wrote other bytes than Fork:\n%s", name, cmp.Diff(want, got))
			}
			wantFF.Path, gotFF.Path = filepath.Base(wantFF.Path), filepath.Base(gotFF.Path)
			if diff := cmp.Diff(wantFF, gotFF, cmp.Comparer(func(a, b jsonl.Entry) bool { return bytes.Equal(a.Raw, b.Raw) })); diff != "" {
				t.Errorf("%s: ForkFile's result differs from the forked session (-Fork +ForkFile):\n%s", name, diff)
			}
		}
	}
}

// readAndRemove returns a forked file's bytes and removes it (a fork
// beside its source would find it there).
func readAndRemove(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	return string(data)
}
