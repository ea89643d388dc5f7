package engine_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/tree"
)

// TestReturnedEntriesAreCopies scribbles over everything a session hands
// out and checks that the session still has its bytes, ids and
// timestamps (they used to share memory with the returned Raw).
func TestReturnedEntriesAreCopies(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := followHeader + userLine("a", "", "one") + "\n" + userLine("b", "a", "two") + "\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := engine.OpenFile(t.Context(), path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	snapshot := func() []string {
		var out []string
		s.Index(func(ix *tree.Index) {
			for _, e := range ix.Entries() {
				out = append(out, string(e.Raw), e.ID, e.Timestamp)
			}
		})
		return out
	}
	before := snapshot()
	scribble := func(es ...*engine.Entry) {
		for _, e := range es {
			for i := range e.Raw {
				e.Raw[i] = 'X'
			}
			e.ID = "changed"
		}
	}
	scribble(s.Entries()...)
	scribble(s.BranchPath("")...)
	scribble(s.BranchPath("a")...)
	e, _ := s.Entry("a")
	leaf, _ := s.LeafID()
	l, _ := s.Entry(leaf)
	scribble(e, l)
	c := s.Context()
	for _, m := range c.Messages {
		for i := range m.Raw {
			m.Raw[i] = 'Y'
		}
		scribble(m.Entry)
	}
	for i := range c.Model {
		c.Model[i] = 'Z'
	}
	tree.Walk(s.Tree(), func(n *tree.Node, _ int) bool { scribble(n.Entry); return true }, nil)
	h := s.Header()
	scribble(&h.Entry)
	appendTo(t, path, userLine("c", "b", "three")+"\n")
	news, err := s.Refresh()
	if err != nil {
		t.Fatal(err)
	}
	scribble(news...)
	after := snapshot()
	if diff := cmp.Diff(before, after[:len(before)]); diff != "" {
		t.Errorf("the session changed with what it handed out (-before +after):\n%s", diff)
	}
	if got := string(s.Header().Raw); got+"\n" != followHeader {
		t.Errorf("header changed: %s", got)
	}
	if m := s.Context().Messages[0]; string(m.Raw) != `{"role":"user","content":"one","timestamp":1}` {
		t.Errorf("context message changed: %s", m.Raw)
	}
}

// TestEntriesAndLeafID: every entry in file order, the leaf's branch, and
// the leaf as pi's getLeafId has it (an id, null or undefined).
func TestEntriesAndLeafID(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := followHeader + userLine("a", "", "one") + "\n" + userLine("b", "a", "two") + "\n" + userLine("c", "a", "three") + "\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := engine.OpenFile(t.Context(), path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var all, path1 []string
	for _, e := range s.Entries() {
		all = append(all, e.ID)
	}
	for _, e := range s.BranchPath("") {
		path1 = append(path1, e.ID)
	}
	if diff := cmp.Diff([][]string{{"a", "b", "c"}, {"a", "c"}}, [][]string{all, path1}); diff != "" {
		t.Error(diff)
	}
	if id, ok := s.LeafID(); id != "c" || !ok {
		t.Errorf("LeafID = %q, %v", id, ok)
	}
	s.ResetLeaf()
	if id, ok := s.LeafID(); id != "" || ok {
		t.Errorf("LeafID after ResetLeaf = %q, %v", id, ok)
	}
	if kind := leafKind(s); kind != engine.KindNull {
		t.Errorf("the leaf's kind after ResetLeaf = %v", kind)
	}
	// A last line without an id: undefined, as pi has it.
	appendTo(t, path, `{"type":"custom","customType":"x"}`+"\n")
	r, err := engine.OpenFile(t.Context(), path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, ok := r.LeafID(); ok {
		t.Error("LeafID of a file ending in an id-less line is ok")
	}
	if kind := leafKind(r); kind != engine.KindAbsent {
		t.Errorf("the leaf's kind = %v, want KindAbsent", kind)
	}
}

// leafKind returns the kind of the session's leaf (tree.Index.Leaf).
func leafKind(s *engine.Session) engine.Kind {
	var kind engine.Kind
	s.Index(func(ix *tree.Index) { _, kind = ix.Leaf() })
	return kind
}

// TestSessionsIterator lists a directory one file at a time and finds
// what List finds.
func TestSessionsIterator(t *testing.T) {
	t.Parallel()
	dir := makeStore(t, 5)
	if err := os.WriteFile(filepath.Join(dir, "not-a-session.jsonl"), []byte("garbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	infos, err := openStore(t, engine.StoreOptions{Dir: dir}).List(t.Context(), "/", engine.ListOptions{NoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, in := range infos {
		want = append(want, in.Path+" "+in.FirstMessage)
	}
	slices.Sort(want)
	for in, err := range openStore(t, engine.StoreOptions{Dir: dir}).Sessions(t.Context(), "/", engine.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, in.Path+" "+in.FirstMessage)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-List +Sessions):\n%s", diff)
	}
	for _, err := range openStore(t, engine.StoreOptions{Dir: filepath.Join(dir, "missing")}).Sessions(t.Context(), "/", engine.ListOptions{}) {
		t.Errorf("missing directory: %v", err)
	}
}
