package shortid

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestShort(t *testing.T) {
	ids := []string{
		"01a23373-1111-7000-8000-000000000001",
		"01a23373-1112-7000-8000-000000000002",
		"01a23373-2222-7000-8000-000000000003",
		"01a24444-0000-7000-8000-000000000004",
		"01a24444-0000-7000-8000-000000000004", // a copy of the same session
		"01a25555-0000-7000-8000-000000000005",
	}
	var s Set
	for _, id := range ids {
		s.Add("", id)
	}
	// A file whose name carries another id than its header: both count.
	s.Add("/s/2026-03-01T09-00-00-000Z_01a25555-9999-7000-8000-000000000009.jsonl", "01a26666-0000-7000-8000-000000000006")
	// Keys that end inside the packed head, beside one that goes on
	// with zero bytes there.
	s.Add("", "012345678")
	s.Add("", "012345678\x00\x00z")
	want := map[string]string{
		ids[0]:                                 "01a23373-1111",
		ids[1]:                                 "01a23373-1112",
		ids[2]:                                 "01a23373-2",
		ids[3]:                                 "01a24444",
		ids[5]:                                 "01a25555-0",
		"01a25555-9999-7000-8000-000000000009": "01a25555-9",
		"01a26666-0000-7000-8000-000000000006": "01a26666",
		"01A23373-2222-7000-8000-000000000003": "01A23373-2",         // case is ignored, kept as written
		"01a2337322227000-8000-000000000003":   "01a233732",          // dashes are ignored
		"01a27777-0000-7000-8000-000000000007": "01a27777",           // not in the set
		"01a23373-1111-7000":                   "01a23373-1111-7000", // a prefix of another: whole
		"short":                                "short",
		"012345678":                            "012345678",
		"012345678\x00\x00z":                   "012345678\x00",
	}
	// The first calls compare with every id, the later search the
	// sorted ids: both give each id's short form.
	for round := range 2 {
		if round == 1 {
			for range scanShorts {
				s.Short(ids[0])
			}
		}
		for id, want := range want {
			if got := s.Short(id); got != want {
				t.Errorf("round %d: Short(%q) = %q, want %q", round, id, got, want)
			}
		}
	}
	// Every short form resolves to its id alone among the set's ids.
	all := append(ids, "01a25555-9999-7000-8000-000000000009", "01a26666-0000-7000-8000-000000000006")
	for _, id := range all {
		p := s.Short(id)
		for _, other := range all {
			if other != id && HasPrefix(other, p) {
				t.Errorf("Short(%s) = %s is a prefix of %s too", id, p, other)
			}
		}
		if !HasPrefix(id, p) {
			t.Errorf("Short(%s) = %s is not its prefix", id, p)
		}
	}
	var none *Set
	if got := none.Short(ids[0]); got != "01a23373" {
		t.Errorf("nil Set: Short = %s, want 01a23373", got)
	}
}

func TestHasPrefix(t *testing.T) {
	for _, c := range []struct {
		id, prefix string
		want       bool
	}{
		{"01a23373-1111-7000", "01a23373-1", true},
		{"01a23373-1111-7000", "01A233731", true},
		{"01a23373-1111-7000", "01a23373-2", false},
		{"ab-cd", "-", false},
		{"-x", "-", true},
	} {
		if got := HasPrefix(c.id, c.prefix); got != c.want {
			t.Errorf("HasPrefix(%q, %q) = %v, want %v", c.id, c.prefix, got, c.want)
		}
	}
}

// TestShortAgainstAllPairs checks Short against the definition, every
// other id compared with each, on ids made to share long prefixes (and
// heads), copies of the same id and ids in other cases and dashes.
func TestShortAgainstAllPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const hex = "0123456789abcdef"
	var ids []string
	for range 3000 {
		// Few distinct leading digits: many ids share 8 to 14 of them.
		b := []byte("01a2")
		for len(b) < 32 {
			if len(b) < 14 {
				b = append(b, hex[r.IntN(2)])
			} else {
				b = append(b, hex[r.IntN(16)])
			}
		}
		id := string(b[:8]) + "-" + string(b[8:12]) + "-" + string(b[12:])
		if r.IntN(10) == 0 {
			id = strings.ToUpper(id)
		}
		switch r.IntN(40) {
		case 0:
			id = id[:r.IntN(len(id))+1] // a head of another's, or not
		case 1:
			id = id[:10] + "\x00" + id[10:] // a zero byte inside the packed head
		case 2:
			id = strings.ReplaceAll(id, "-", "") + "-" // dashes elsewhere
		}
		ids = append(ids, id)
		if r.IntN(20) == 0 {
			ids = append(ids, id) // a copy
		}
	}
	var s Set
	for _, id := range ids {
		s.Add("", id)
	}
	probe := append(slices.Clone(ids[:500]), "01a20000-0000-7000-8000-000000000000", "01a21111", "01a2", "01a21010\x00")
	for i, id := range probe {
		k := Key(id)
		need := MinLen
		for _, o := range ids {
			if ok := Key(o); ok != k {
				need = max(need, commonPrefix(k, ok)+1)
			}
		}
		want := id
		if need < len(k) {
			n := 0
			for i := 0; i < len(id); i++ {
				if id[i] != '-' {
					if n++; n == need {
						want = id[:i+1]
						break
					}
				}
			}
		}
		// The first calls of a Set compare with every id, the others
		// search the sorted ids: both, for every id.
		if got := s.Short(id); got != want {
			t.Fatalf("Short(%q) = %q, want %q (call %d)", id, got, want, i+1)
		}
		if i%5 == 4 {
			var first Set
			for _, id := range ids {
				first.Add("", id)
			}
			if got := first.Short(id); got != want {
				t.Fatalf("first Short(%q) = %q, want %q", id, got, want)
			}
		}
	}
}

// BenchmarkSet is a store's worth of ids added and shortened, a page of
// them as a search's hits are, and all as a listing does. The ids are
// UUIDv7s, as pi makes: sessions begun within a minute of each other
// share their first eight digits.
func BenchmarkSet(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	ids := make([]string, 50000)
	ms := uint64(1735689600000)
	for i := range ids {
		ms += uint64(r.IntN(2000)) // a session every second on average
		ids[i] = fmt.Sprintf("%08x-%04x-7%03x-8000-%012x", ms>>16, ms&0xffff, r.IntN(1<<12), r.Uint64()>>16)
	}
	for _, c := range []struct {
		name  string
		short int
	}{{"page", 20}, {"search", 100}, {"list", len(ids)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var s Set
				for _, id := range ids {
					s.Add("", id)
				}
				for _, id := range ids[:c.short] {
					_ = s.Short(id)
				}
			}
		})
	}
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
