package main

import (
	"errors"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// TestBranchTo checks the branch to an entry named by a prefix, the
// branch of the leaf, and none for a session without entries.
func TestBranchTo(t *testing.T) {
	ids := []string{"aaaa1111", "bbbb2222", "cccc3333"}
	n := 0
	st, err := engine.OpenStore(t.Context(), engine.StoreOptions{Dir: t.TempDir(), NewEntryID: func() string { n++; return ids[n-1] }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(t.Context(), "/p", engine.CreateOptions{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	for range ids {
		if _, err := s.AppendMessage(message.NewUser("x", time.UnixMilli(1772355600000))); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := branchTo(s, "bbbb"); err != nil || len(b) != 2 || b[1].ID != "bbbb2222" {
		t.Errorf("branchTo(bbbb) = %d entries, %v", len(b), err)
	}
	if b, err := branchTo(s, ""); err != nil || len(b) != 3 {
		t.Errorf("branchTo(\"\") = %d entries, %v", len(b), err)
	}
	if _, err := branchTo(s, "zz"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("branchTo(zz): %v", err)
	}
	empty, err := st.Create(t.Context(), "/p", engine.CreateOptions{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := branchTo(empty, ""); b != nil || err != nil {
		t.Errorf("no entries: %v, %v", b, err)
	}
}
