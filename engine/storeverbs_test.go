package engine_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/message"
)

// openStore opens a store with o, on a new temporary directory when
// o.Dir and o.AgentDir are both "".
func openStore(t testing.TB, o engine.StoreOptions) *engine.Store {
	t.Helper()
	if o.Dir == "" && o.AgentDir == "" {
		o.Dir = t.TempDir()
	}
	st, err := engine.OpenStore(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// written creates a session for cwd in st holding a user message and an
// assistant reply (so that its file is written), and returns its file
// and id.
func written(t testing.TB, st *engine.Store, cwd string) (file, id string) {
	t.Helper()
	s, err := st.Create(t.Context(), cwd, engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.UnixMilli(1772355600000)
	if _, err := s.AppendMessage(message.NewUser("question in "+cwd, at)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(reply(at)); err != nil {
		t.Fatal(err)
	}
	return s.SessionFile(), s.SessionID()
}

// TestStoreVerbs runs each act of a Store on an agent's store: create
// (into the per-cwd directory), open by path, id and id prefix, resolve,
// continue the most recent, list one cwd and every cwd, iterate, fork
// (every entry, the leaf's branch, a branch at an entry), trash and the
// walk of its files.
func TestStoreVerbs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	agent := t.TempDir()
	st := openStore(t, engine.StoreOptions{AgentDir: agent, Sync: engine.SyncNone})
	if want := filepath.Join(agent, "sessions"); st.Dir() != want {
		t.Errorf("Dir = %s, want %s", st.Dir(), want)
	}
	a, aID := written(t, st, "/home/dev/a")
	b, bID := written(t, st, "/home/dev/b")
	if filepath.Dir(a) != layout.DefaultSessionDir(agent, "/home/dev/a") {
		t.Errorf("created %s, not in a's per-cwd directory", a)
	}

	for _, name := range []string{a, aID, aID[:13]} {
		s, err := st.Open(ctx, name, engine.OpenOptions{ReadOnly: true})
		if err != nil {
			t.Fatalf("Open(%s): %v", name, err)
		}
		if s.SessionFile() != a || s.Cwd() != "/home/dev/a" {
			t.Errorf("Open(%s) = %s in %s", name, s.SessionFile(), s.Cwd())
		}
		s.Close()
		if p, err := st.Resolve(ctx, name); err != nil || p != a {
			t.Errorf("Resolve(%s) = %s, %v", name, p, err)
		}
	}
	if _, err := st.Open(ctx, "ffffffff", engine.OpenOptions{}); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Open of an unknown id: %v", err)
	}

	r, err := st.ContinueRecent(ctx, "/home/dev/b", engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.SessionFile() != b {
		t.Errorf("ContinueRecent = %s, want %s", r.SessionFile(), b)
	}
	r.Close()

	paths := func(infos []engine.Info) []string {
		var out []string
		for _, in := range infos {
			out = append(out, in.Path)
		}
		slices.Sort(out)
		return out
	}
	one, err := st.List(ctx, "/home/dev/a", engine.ListOptions{})
	if err != nil || !slices.Equal(paths(one), []string{a}) {
		t.Errorf("List(a) = %v, %v", paths(one), err)
	}
	all, err := st.List(ctx, "", engine.ListOptions{})
	want := []string{a, b}
	slices.Sort(want)
	if err != nil || !slices.Equal(paths(all), want) {
		t.Errorf("List(\"\") = %v, %v; want %v", paths(all), err, want)
	}
	var iterated []engine.Info
	for in, err := range st.Sessions(ctx, "", engine.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		iterated = append(iterated, *in)
	}
	if !slices.Equal(paths(iterated), want) {
		t.Errorf("Sessions(\"\") = %v, want %v", paths(iterated), want)
	}
	var walked []string
	for f, err := range st.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		walked = append(walked, f.Path)
	}
	if !slices.Equal(walked, want) {
		t.Errorf("Files = %v, want %v", walked, want)
	}

	// Every entry, beside the source; one branch into another cwd's
	// directory; a branch at an entry.
	whole, err := st.Fork(ctx, aID, engine.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(whole.SessionFile()) != filepath.Dir(a) || whole.Header().ParentSession != a ||
		whole.Cwd() != "/home/dev/a" || len(whole.Entries()) != 2 {
		t.Errorf("fork: %s, parent %s, cwd %s, %d entries", whole.SessionFile(), whole.Header().ParentSession, whole.Cwd(), len(whole.Entries()))
	}
	whole.Close()
	branch, err := st.Fork(ctx, a, engine.ForkOptions{Branch: true, Cwd: "/home/dev/c"})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(branch.SessionFile()) != layout.DefaultSessionDir(agent, "/home/dev/c") || branch.Cwd() != "/home/dev/c" || len(branch.Entries()) != 2 {
		t.Errorf("fork of the branch: %s, cwd %s, %d entries", branch.SessionFile(), branch.Cwd(), len(branch.Entries()))
	}
	branch.Close()
	src, err := engine.OpenFile(ctx, a, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	first := src.Entries()[0].ID
	src.Close()
	at, err := st.Fork(ctx, a, engine.ForkOptions{At: first[:6]})
	if err != nil {
		t.Fatal(err)
	}
	if es := at.Entries(); len(es) != 1 || es[0].ID != first {
		t.Errorf("fork at %s: %d entries", first, len(es))
	}
	at.Close()

	moved, err := st.Trash(ctx, bID, engine.TrashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 1 || moved[0].From != b || filepath.Base(moved[0].To) != filepath.Base(b) ||
		!isBelow(moved[0].To, filepath.Join(st.Dir(), ".trash")) {
		t.Errorf("Trash moved %v", moved)
	}
	if _, err := st.Resolve(ctx, bID); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("a trashed id resolves: %v", err)
	}
}

// isBelow reports whether path is inside dir.
func isBelow(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && rel[:min(3, len(rel))] != "../"
}

// TestStoreOnDir: a store opened on a directory is one session directory
// for every cwd, and lists its whole tree with cwd "".
func TestStoreOnDir(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	st := openStore(t, engine.StoreOptions{Dir: dir, Sync: engine.SyncNone})
	a, _ := written(t, st, "/home/dev/a")
	b, _ := written(t, st, "/home/dev/b")
	if filepath.Dir(a) != dir || filepath.Dir(b) != dir {
		t.Errorf("created %s and %s, not in %s", a, b, dir)
	}
	deeper := filepath.Join(dir, "sub", "c.jsonl")
	if err := os.MkdirAll(filepath.Dir(deeper), 0o700); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(deeper, data, 0o600); err != nil {
		t.Fatal(err)
	}
	flat, err := st.List(ctx, "/anything", engine.ListOptions{NoIndex: true, EveryCwd: true})
	if err != nil || len(flat) != 2 {
		t.Errorf("List(cwd) with EveryCwd = %d sessions, %v; want the directory's 2", len(flat), err)
	}
	// Without it, as pi 1.x, only the cwd's: none is /anything's.
	if mine, err := st.List(ctx, "/anything", engine.ListOptions{NoIndex: true}); err != nil || len(mine) != 0 {
		t.Errorf("List(cwd) = %d sessions, %v; want none of another cwd", len(mine), err)
	}
	tree, err := st.List(ctx, "", engine.ListOptions{NoIndex: true})
	if err != nil || len(tree) != 3 {
		t.Errorf("List(\"\") = %d sessions, %v; want the tree's 3", len(tree), err)
	}
}

// TestOpenMissingPath: opening a path that does not exist is ErrNotFound
// and leaves nothing behind; OpenOptions.Create starts a new session
// there, written at its first user or assistant message.
func TestOpenMissingPath(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	p := filepath.Join(dir, "typo.jsonl")
	for _, o := range []engine.OpenOptions{{}, {ReadOnly: true}} {
		if s, err := engine.OpenFile(ctx, p, o); !errors.Is(err, engine.ErrNotFound) {
			if s != nil {
				s.Close()
			}
			t.Errorf("OpenFile(%+v) of a missing path: %v, want ErrNotFound", o, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a failed open left %v", ents)
	}
	s, err := engine.OpenFile(ctx, p, engine.OpenOptions{Create: true, Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Cwd() != "/w" || s.SessionFile() != p {
		t.Errorf("new session at %s in %s", s.SessionFile(), s.Cwd())
	}
	at := time.UnixMilli(1)
	if _, err := s.AppendModelChange("p", "m"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("written before the first user or assistant message: %v", err)
	}
	if _, err := s.AppendMessage(reply(at)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p); err != nil {
		t.Errorf("not written: %v", err)
	}
}

// TestCreateWriteAtOnce: with WriteAtOnce the first append writes the
// file, header and a setup entry (a model change), before any user or
// assistant message; without it nothing is written, as in pi.
func TestCreateWriteAtOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := openStore(t, engine.StoreOptions{})
	for _, once := range []bool{false, true} {
		s, err := st.Create(ctx, "/w", engine.CreateOptions{WriteAtOnce: once})
		if err != nil {
			t.Fatal(err)
		}
		id, err := s.AppendModelChange("p", "m")
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(s.SessionFile())
		switch {
		case !once && !errors.Is(err, fs.ErrNotExist):
			t.Errorf("without WriteAtOnce the file is there after a model change: %v", err)
		case once && err != nil:
			t.Errorf("with WriteAtOnce: %v", err)
		case once:
			ro, err := engine.OpenFile(ctx, s.SessionFile(), engine.OpenOptions{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			if es := ro.Entries(); len(es) != 1 || es[0].ID != id {
				t.Errorf("the file holds %d entries:\n%s", len(es), data)
			}
			ro.Close()
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCreateInMemory: an in-memory session takes the store's clock and
// ids, and writes nothing.
func TestCreateInMemory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := openStore(t, engine.StoreOptions{Dir: dir, NewSessionID: func() string { return "mem" },
		Now: func() time.Time { return time.UnixMilli(1772355600000) }})
	s, err := st.Create(t.Context(), "/w", engine.CreateOptions{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.AppendMessage(reply(time.UnixMilli(1))); err != nil {
		t.Fatal(err)
	}
	h := s.Header()
	if diff := cmp.Diff([]any{"mem", "2026-03-01T09:00:00.000Z", "", false}, []any{h.ID, h.Entry.Timestamp, s.SessionFile(), s.IsPersisted()}); diff != "" {
		t.Errorf("in memory (-want +got):\n%s", diff)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("an in-memory session wrote %v", ents)
	}
}
