// Package shortid gives session ids the short forms people see and type,
// as git does for objects: the shortest prefix, of at least MinLen
// characters, that no other id of the store shares. Ids are compared in
// the form Key gives, without regard to case and with dashes left out,
// so that every prefix a short form stands for is resolved the same way
// (engine.Store.Resolve compares names so).
package shortid

import (
	"cmp"
	"math/bits"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

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
	// The ids added, as they were given: their Keys are not made (a
	// store's 50,000 took 12 ms of a 0.15 s search as a string each,
	// and sorting them as strings 9 ms more).
	ids []string
	// The ids' heads (packed), made by the first Short: each with its
	// Key's first 16 bytes, so that most comparisons are of integers.
	once  sync.Once
	heads []packed
	// The first scanShorts calls of Short compare their id with every
	// head; the next sorts a copy of the heads by Key (order) and
	// searches it. A search shortens a page of hits, which costs less
	// than the sort (a cold process's 50,000 took 12 ms); a listing all.
	calls atomic.Int64
	sort  sync.Once
	order []packed
}

// scanShorts is how many calls of Short scan every head before one
// sorts them.
const scanShorts = 32

// packed is an id's head: the first 16 bytes of its Key, big-endian and
// padded with zeros, how many of them the Key has, and the id's index in
// Set.ids.
type packed struct {
	hi, lo uint64
	n      uint8
	i      int32
}

// headLen is how many bytes of a Key a packed head holds.
const headLen = 16

// Grow makes room for n more ids, as slices.Grow does.
func (s *Set) Grow(n int) { s.ids = slices.Grow(s.ids, n) }

// Add adds a session's id and, when path names a file whose name carries
// another id (pi's "<time>_<id>.jsonl"), that id too: a name is resolved
// by both. Empty ids are left out.
func (s *Set) Add(path, id string) {
	if id != "" {
		s.ids = append(s.ids, id)
	}
	if path != "" {
		if n := sessionfile.IDFromFileName(filepath.Base(path)); n != "" && n != id {
			s.ids = append(s.ids, n)
		}
	}
}

// pack makes the ids' heads.
func (s *Set) pack() {
	s.heads = make([]packed, len(s.ids))
	for i, id := range s.ids {
		s.heads[i] = pack(id, int32(i))
	}
}

// sorted makes order: the heads, in the order of their ids' Keys.
func (s *Set) sorted() {
	s.order = slices.Clone(s.heads)
	slices.SortFunc(s.order, func(a, b packed) int { return s.compare(a, b, s.ids[b.i]) })
}

// compare compares the Keys of a (an id of the set) and b, whose id is
// bid. Heads that differ order their Keys as they do: a Key that ends
// is padded with zeros, and one that ends where another has a zero byte
// is the shorter, so it is the prefix. Only Keys whose heads are whole
// and equal are compared further.
func (s *Set) compare(a, b packed, bid string) int {
	if c := cmp.Compare(a.hi, b.hi); c != 0 {
		return c
	}
	if c := cmp.Compare(a.lo, b.lo); c != 0 {
		return c
	}
	if a.n != headLen || b.n != headLen {
		return cmp.Compare(a.n, b.n)
	}
	if aid := s.ids[a.i]; aid != bid { // (most often the same id)
		return compareKeys(aid, bid)
	}
	return 0
}

// prefixLen is the length of the longest common prefix of the Keys of a
// (an id of the set) and b, whose id is bid.
func (s *Set) prefixLen(a, b packed, bid string) int {
	short := int(min(a.n, b.n))
	if x := a.hi ^ b.hi; x != 0 {
		return min(bits.LeadingZeros64(x)/8, short)
	}
	if x := a.lo ^ b.lo; x != 0 {
		return min(8+bits.LeadingZeros64(x)/8, short)
	}
	if short < headLen {
		return short
	}
	return keysPrefixLen(s.ids[a.i], bid)
}

// pack is the head of id's Key, id being the i-th of the set's ids.
func pack(id string, i int32) packed {
	var w [2]uint64
	r := keyReader{s: id}
	n := 0
	for ; n < headLen; n++ {
		c, ok := r.next()
		if !ok {
			break
		}
		w[n/8] |= uint64(c) << (56 - 8*(n%8))
	}
	return packed{hi: w[0], lo: w[1], n: uint8(n), i: i}
}

// keyReader yields the bytes of an id's Key, one at a time.
type keyReader struct {
	s string
	i int
}

func (r *keyReader) next() (byte, bool) {
	for r.i < len(r.s) {
		c := r.s[r.i]
		r.i++
		switch {
		case c == '-':
		case 'A' <= c && c <= 'Z':
			return c + ('a' - 'A'), true
		default:
			return c, true
		}
	}
	return 0, false
}

// compareKeys compares Key(a) with Key(b), as strings.Compare would.
func compareKeys(a, b string) int {
	ra, rb := keyReader{s: a}, keyReader{s: b}
	for {
		ca, oka := ra.next()
		cb, okb := rb.next()
		switch {
		case !oka || !okb:
			return cmp.Compare(b2i(oka), b2i(okb))
		case ca != cb:
			return cmp.Compare(ca, cb)
		}
	}
}

// keysPrefixLen is the length of the longest common prefix of Key(a) and
// Key(b).
func keysPrefixLen(a, b string) int {
	ra, rb := keyReader{s: a}, keyReader{s: b}
	for n := 0; ; n++ {
		ca, oka := ra.next()
		cb, okb := rb.next()
		if !oka || !okb || ca != cb {
			return n
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// keyLen is the length of Key(id).
func keyLen(id string) int {
	return len(id) - strings.Count(id, "-")
}

// longest is the length of the longest prefix id's Key shares with
// another id's (one whose Key is not id's), in the Keys' order the
// prefixes shared with the id before and the id after: -1 when there is
// none.
func (s *Set) longest(id string) int {
	p := pack(id, -1)
	n := -1
	if s.calls.Add(1) <= scanShorts {
		for _, h := range s.heads {
			if x := h.hi ^ p.hi; x != 0 { // (most heads: inline)
				n = max(n, min(bits.LeadingZeros64(x)/8, int(h.n), int(p.n)))
			} else if s.compare(h, p, id) != 0 {
				n = max(n, s.prefixLen(h, p, id))
			}
		}
		return n
	}
	s.sort.Do(s.sorted)
	lo, _ := slices.BinarySearchFunc(s.order, p, func(e, t packed) int { return s.compare(e, t, id) })
	hi := lo
	for hi < len(s.order) && s.compare(s.order[hi], p, id) == 0 {
		hi++ // the id itself (a copy of a session may hold it twice)
	}
	if lo > 0 {
		n = max(n, s.prefixLen(s.order[lo-1], p, id))
	}
	if hi < len(s.order) {
		n = max(n, s.prefixLen(s.order[hi], p, id))
	}
	return n
}

// Short returns the shortest prefix of id, of at least MinLen Key
// characters, that no other id of the set starts with, cut from id as it
// is written (a UUID's "01a23373-1"); the whole id when none is shorter.
// Ids the set does not hold are shortened against it all the same. A nil
// set shortens every id to MinLen.
func (s *Set) Short(id string) string {
	need := MinLen
	if s != nil {
		s.once.Do(s.pack)
		need = max(need, s.longest(id)+1)
	}
	if need >= keyLen(id) {
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
