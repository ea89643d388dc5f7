package search

import (
	"github.com/sessctl/sessctl/internal/shortid"
	"github.com/sessctl/sessctl/layout"
)

// The own engine's state knows every JSONL session of the stores it
// indexed, so a search on it shortens its hits' session ids (Session.Short)
// among them, without the listing of each store a caller would otherwise
// need (at 50,000 sessions that listing costs more than the search).

// idCache is the set of ids the last search shortened against, kept for
// the next search of the same stores while the state's files are the
// same ones: an append changes no file's session, so a search after pi
// appended (the common case of a resident index) does not build the set
// again. A file's session is read only when it is numbered (new, or
// replaced: NextFile grows) and a file is only otherwise dropped (fewer
// files); the state itself is the same value while it is kept.
type idCache struct {
	st    *ownState
	next  uint32
	files int
	key   string
	set   *shortid.Set
}

// shortIDs returns the ids of the JSONL sessions of o's state below the
// stores' roots, kept in x (idCache).
func (o *own) shortIDs(stores []layout.Place) *shortid.Set {
	x := o.x
	key := storesKey(stores)
	if c := x.ids; c != nil && c.st == o.st && c.next == o.st.NextFile && c.files == len(o.st.Files) && c.key == key {
		return c.set
	}
	rs := roots(stores)
	set, n := &shortid.Set{}, 0
	set.Grow(len(o.st.Sessions)) // (a file's name may add another)
	// A JSONL session's key is its file's path, and a session no file
	// refers to is forgotten when the state is saved.
	for path, s := range o.st.Sessions {
		if s.Format != layout.FormatJSONL || !below(path, rs) {
			continue
		}
		set.Add(path, s.ID)
		n++
	}
	if n == 0 {
		set = nil // (roots the state's paths are not below): the caller lists
	}
	x.ids = &idCache{st: o.st, next: o.st.NextFile, files: len(o.st.Files), key: key, set: set}
	return set
}

// below reports whether path lies below one of roots.
func below(path string, roots []string) bool {
	for _, r := range roots {
		if isUnder(path, r) {
			return true
		}
	}
	return false
}
