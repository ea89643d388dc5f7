package engine_test

import (
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
)

// TestBranchDurably checks that the moved leaf survives a reload (Branch
// alone does not), as a sessctl-branch custom entry at the target that
// names the leaf it moved from.
func TestBranchDurably(t *testing.T) {
	t.Parallel()
	st := openStore(t, engine.StoreOptions{Dir: t.TempDir()})
	s, err := st.Create(t.Context(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	msg := func(role, text string) string {
		return mustID(t)(s.AppendMessage(raw(string(jsonl.NewObject(64).String("role", role).String("content", text).Number("timestamp", 1).Bytes()))))
	}
	u1 := msg("user", "u1")
	a1 := msg("assistant", "a1")
	id, err := s.BranchDurably(u1)
	if err != nil {
		t.Fatal(err)
	}
	path := s.SessionFile()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = st.Open(t.Context(), path, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if leaf, _ := s.LeafID(); leaf != id {
		t.Fatalf("leaf after reload %s, want the branch entry %s", leaf, id)
	}
	en, _ := s.Entry(id)
	if en.ParentID != u1 || en.Type != "custom" {
		t.Errorf("branch entry %s", en.Raw)
	}
	ct, _ := en.Field("customType")
	data, _ := en.Field("data")
	if string(ct) != `"sessctl-branch"` || string(data) != `{"from":"`+a1+`"}` {
		t.Errorf("branch entry %s, want customType sessctl-branch and data from %s", en.Raw, a1)
	}
	if _, err := s.BranchDurably("nope"); err == nil {
		t.Errorf("BranchDurably to a missing entry succeeded")
	}
}
