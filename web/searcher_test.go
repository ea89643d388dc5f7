package web

import "testing"

// TestSearcherNeverWaits: the kept (watched) index serves one search at
// a time; a search that comes while it is in use gets an index of its
// own instead of waiting; after Close the kept index is closed (by the
// search using it, when one is) and later searches get their own.
func TestSearcherNeverWaits(t *testing.T) {
	s := newServer(t, Options{})
	noProgress := func(int64, int64) {}
	x1, release1, err := s.h.searchIndex(noProgress)
	if err != nil {
		t.Fatal(err)
	}
	x2, release2, err := s.h.searchIndex(noProgress) // returns at once
	if err != nil {
		t.Fatal(err)
	}
	if x1 == x2 {
		t.Fatal("two searches at once share the kept index")
	}
	release2()
	if err := s.h.closeSearch(); err != nil {
		t.Fatal(err)
	}
	if s.h.search.x == nil {
		t.Error("Close took the kept index from the search using it")
	}
	release1()
	if s.h.search.x != nil {
		t.Error("the kept index is still open after its search ended, after Close")
	}
	x3, release3, err := s.h.searchIndex(noProgress)
	if err != nil {
		t.Fatal(err)
	}
	defer release3()
	if x3 == x1 || s.h.search.x != nil {
		t.Error("a search after Close reopened the kept index")
	}
}
