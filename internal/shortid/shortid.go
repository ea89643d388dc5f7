// Package shortid gives session ids the short forms people see and type,
// as git does for objects: the shortest prefix, of at least MinLen
// characters, that no other id of the store shares. Ids are compared in
// the form Key gives, without regard to case and with dashes left out,
// so that every prefix a short form stands for is resolved the same way
// (engine.Store.Resolve compares names so).
package shortid

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/sessctl/sessctl/internal/sessionfile"
)

// MinLen is the length of the shortest short form, in Key characters:
// eight hex digits of a UUID.
const MinLen = 8

// Key is the form ids and prefixes are compared in: ASCII letters in
// lower case, dashes left out. A UUID's "01a23373-1" and "01a233731" are
// the same prefix. Every other byte is kept, so a Key's bytes are the
// id's bytes but its dashes.
func Key(s string) string { return string(appendKey(make([]byte, 0, len(s)), s)) }

// appendKey appends s's Key to b.
func appendKey(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '-':
		case 'A' <= c && c <= 'Z':
			b = append(b, c+('a'-'A'))
		default:
			b = append(b, c)
		}
	}
	return b
}

// HasPrefix reports whether the id starts with the prefix, compared as
// Keys. A prefix that is all dashes is compared as it is.
func HasPrefix(id, prefix string) bool {
	k := Key(prefix)
	if k == "" {
		return strings.HasPrefix(id, prefix)
	}
	return strings.HasPrefix(Key(id), k)
}

// Set is the ids of a store, to shorten them against each other. Add
// every id, then call Short; Short may be called from several goroutines
// at once, Add not after it.
type Set struct {
	// The Keys added, one after another in buf, each ending at its
	// ends: one allocation for many ids (a store's 50,000 took 12 ms
	// of a 0.15 s search as a string each).
	buf  []byte
	ends []int
	keys []string // made from buf and sorted by the first Short
	once sync.Once
}

// Add adds a session's id and, when path names a file whose name carries
// another id (pi's "<time>_<id>.jsonl"), that id too: a name is resolved
// by both. Empty ids are left out.
func (s *Set) Add(path, id string) {
	if id != "" {
		s.add(id)
	}
	if path != "" {
		if n := sessionfile.IDFromFileName(filepath.Base(path)); n != "" && n != id {
			s.add(n)
		}
	}
}

func (s *Set) add(id string) {
	s.buf = appendKey(s.buf, id)
	s.ends = append(s.ends, len(s.buf))
}

// sorted makes keys of buf and sorts them.
func (s *Set) sorted() {
	all := string(s.buf)
	s.keys = make([]string, len(s.ends))
	from := 0
	for i, end := range s.ends {
		s.keys[i] = all[from:end]
		from = end
	}
	s.buf, s.ends = nil, nil
	slices.Sort(s.keys)
}

// Short returns the shortest prefix of id, of at least MinLen Key
// characters, that no other id of the set starts with, cut from id as it
// is written (a UUID's "01a23373-1"); the whole id when none is shorter.
// Ids the set does not hold are shortened against it all the same. A nil
// set shortens every id to MinLen.
func (s *Set) Short(id string) string {
	k := Key(id)
	need := MinLen
	if s != nil {
		s.once.Do(s.sorted)
		lo, _ := slices.BinarySearch(s.keys, k)
		hi := lo
		for hi < len(s.keys) && s.keys[hi] == k {
			hi++ // the id itself (a copy of a session may hold it twice)
		}
		if lo > 0 {
			need = max(need, commonPrefix(k, s.keys[lo-1])+1)
		}
		if hi < len(s.keys) {
			need = max(need, commonPrefix(k, s.keys[hi])+1)
		}
	}
	if need >= len(k) {
		return id
	}
	// Cut id after its need-th character that is not a dash.
	n := 0
	for i := 0; i < len(id); i++ {
		if id[i] == '-' {
			continue
		}
		if n++; n == need {
			return id[:i+1]
		}
	}
	return id
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
