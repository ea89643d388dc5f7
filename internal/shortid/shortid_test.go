package shortid

import "testing"

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
	for id, want := range map[string]string{
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
	} {
		if got := s.Short(id); got != want {
			t.Errorf("Short(%s) = %s, want %s", id, got, want)
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
