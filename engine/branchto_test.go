package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// TestBranchTo checks the branch to an entry named by a prefix, the
// branch of the leaf, and none for a session without entries, of a
// Session and of a View of its file.
func TestBranchTo(t *testing.T) {
	ids := []string{"aaaa1111", "bbbb2222", "cccc3333"}
	n := 0
	st, err := engine.OpenStore(t.Context(), engine.StoreOptions{Dir: t.TempDir(), NewEntryID: func() string { n++; return ids[n-1] }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(t.Context(), "/p", engine.CreateOptions{WriteAtOnce: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range ids {
		if _, err := s.AppendMessage(message.NewUser("x", time.UnixMilli(1772355600000))); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := s.BranchTo("bbbb"); err != nil || len(b) != 2 || b[1].ID != "bbbb2222" {
		t.Errorf("BranchTo(bbbb) = %d entries, %v", len(b), err)
	}
	if b, err := s.BranchTo(""); err != nil || len(b) != 3 {
		t.Errorf("BranchTo(\"\") = %d entries, %v", len(b), err)
	}
	if _, err := s.BranchTo("zz"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("BranchTo(zz): %v", err)
	}
	v, err := st.View(t.Context(), s.SessionFile())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if b, err := v.BranchTo("bbbb"); err != nil || len(b) != 2 || b[1].ID != "bbbb2222" {
		t.Errorf("View.BranchTo(bbbb) = %d entries, %v", len(b), err)
	}
	if b, err := v.BranchTo(""); err != nil || len(b) != 3 {
		t.Errorf("View.BranchTo(\"\") = %d entries, %v", len(b), err)
	}
	empty, err := st.Create(t.Context(), "/p", engine.CreateOptions{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := empty.BranchTo(""); b != nil || err != nil {
		t.Errorf("no entries: %v, %v", b, err)
	}
}
