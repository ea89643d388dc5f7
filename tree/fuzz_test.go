package tree_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/tree"
)

// fuzzEntries turns fuzz bytes into session lines, three bytes each: an
// id from a small set (so ids repeat), a parent (an id, null, missing, a
// number, the entry itself), and a type with its payload and a timestamp
// that may not parse. At most 400 entries.
func fuzzEntries(t *testing.T, data []byte) []jsonl.Entry {
	var entries []jsonl.Entry
	for i := 0; i+2 < len(data) && len(entries) < 400; i += 3 {
		a, b, c := data[i], data[i+1], data[i+2]
		o := jsonl.NewObject(128)
		switch c % 8 {
		case 4:
			o.String("type", jsonl.TypeLabel)
		case 5:
			o.String("type", jsonl.TypeSessionInfo)
		case 6:
			o.String("type", jsonl.TypeCompaction)
		case 7:
			o.String("type", jsonl.TypeSession) // a header in the middle
		default:
			o.String("type", jsonl.TypeMessage)
		}
		id := ""
		switch k := a % 16; {
		case k < 12:
			id = "e" + strconv.Itoa(int(k))
			o.String("id", id)
		case k == 12: // no id
		case k == 13:
			o.Number("id", 7)
		case k == 14:
			o.String("id", "")
		default:
			o.Null("id")
		}
		switch k := b % 16; {
		case k < 12:
			o.String("parentId", "e"+strconv.Itoa(int(k)))
		case k == 12:
			o.Null("parentId")
		case k == 13: // no parentId
		case k == 14:
			o.Number("parentId", 7)
		default:
			if id != "" {
				o.String("parentId", id)
			}
		}
		if c%5 == 0 {
			o.String("timestamp", "not a date")
		} else {
			o.String("timestamp", fmt.Sprintf("2026-03-01T10:%02d:%02d.000Z", c%7, b%60))
		}
		switch c % 8 {
		case 4:
			o.String("targetId", "e"+strconv.Itoa(int(a/16%12)))
			if c/8%3 > 0 {
				o.String("label", "L"+strconv.Itoa(int(c/8)))
			}
		case 5:
			o.String("name", strings.Repeat(" ", int(c/8%2))+"n"+strconv.Itoa(int(b)))
		case 6:
			o.String("firstKeptEntryId", "e"+strconv.Itoa(int(b/16%12)))
		}
		e, err := jsonl.ParseEntry(o.Bytes())
		if err != nil {
			t.Fatalf("fixture line does not parse: %v", err)
		}
		entries = append(entries, e)
	}
	return entries
}

// FuzzBuild checks the tree index on random parent links, repeated and
// missing ids, self parents and cycles: building never panics; Branch,
// Children, Tree and Walk end and give consistent answers. Input that
// starts with '{' is a session file (the corpus seeds); anything else is
// decoded by fuzzEntries, which reaches odd shapes much faster.
func FuzzBuild(f *testing.F) {
	for _, data := range testenv.CorpusFiles(f, testenv.Suffix(".jsonl"), "pi", "cases") {
		if len(data) > 0 && data[0] == '{' {
			f.Add(data)
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0, 12, 0, 1, 0, 1, 2, 1, 2})                // a chain
	f.Add([]byte{0, 1, 0, 1, 0, 0})                          // a cycle
	f.Add([]byte{0, 15, 0})                                  // a self parent
	f.Add([]byte{0, 12, 0, 0, 12, 0, 1, 0, 0, 1, 0, 0})      // repeated ids
	f.Add([]byte{12, 0, 0, 13, 13, 1, 14, 14, 2, 15, 15, 3}) // odd ids
	f.Add([]byte{0, 12, 4, 17, 0, 12, 1, 0, 5, 2, 1, 6})     // labels, names, compaction
	chain := []byte{}
	for i := range 11 {
		for range 2 {
			chain = append(chain, byte(i), byte((i+11)%12), 0) // repeated ids, chained
		}
	}
	f.Add(chain)
	f.Fuzz(func(t *testing.T, data []byte) {
		var entries []jsonl.Entry
		if len(data) > 0 && data[0] == '{' {
			entries = jsonl.ParseFile(data).Entries
		} else {
			entries = fuzzEntries(t, data)
		}
		ix := tree.Build(entries)
		n := 0
		for i := range entries {
			if !entries[i].IsHeader() {
				n++
			}
		}
		if ix.Len() != n {
			t.Fatalf("Len %d, want %d", ix.Len(), n)
		}
		ids := ix.IDs()
		for _, id := range ids {
			e, ok := ix.Get(id)
			if !ok || tree.Key(e) != id {
				t.Fatalf("Get(%q) = %v, %v", id, e, ok)
			}
			checkBranch(t, ix, id, ix.Branch(id), len(ids))
			for _, c := range ix.Children(id) {
				ce, ok := ix.Get(c)
				if !ok {
					t.Fatalf("child %q of %q is not indexed", c, id)
				}
				if p, _ := tree.ParentKey(ce); p != id {
					t.Fatalf("child %q of %q has parent %q", c, id, p)
				}
			}
		}
		if leaf, kind := ix.Leaf(); kind == jsonl.KindString {
			checkBranch(t, ix, leaf, ix.LeafBranch(), len(ids))
		}
		// Walks end: no deeper than the distinct ids, no more visits than
		// one per node plus the repeat bound. (This walk stops descending
		// after 50,000 visits to keep the fuzzer fast; TestWalkEnds...
		// covers the bound itself.)
		roots := ix.Tree()
		visits, enters := 0, 0
		tree.Walk(roots, func(nd *tree.Node, depth int) bool {
			visits++
			if depth > len(ids) {
				t.Fatalf("walk at depth %d with %d distinct ids", depth, len(ids))
			}
			return visits < 50000
		}, func(*tree.Node, int) { enters++ })
		if visits != enters || visits > len(ids)+tree.MaxRepeatVisits {
			t.Fatalf("walk made %d visits (%d leaves) for %d ids", visits, enters, len(ids))
		}
		_ = ix.Labels()
		_, _ = ix.Name()
		checkPositions(t, ix, entries, ids)
	})
}

// checkPositions checks that the walks without a map (ParentPositions,
// LastWithKey, BranchAt) give the index's answers: Get for every id, and
// BranchFrom from every entry.
func checkPositions(t *testing.T, ix *tree.Index, entries []jsonl.Entry, ids []string) {
	t.Helper()
	for _, id := range append(ids, "absent id") {
		want, ok := ix.Get(id)
		i := tree.LastWithKey(entries, id)
		if ok != (i >= 0) || ok && want != &entries[i] {
			t.Fatalf("LastWithKey(%q) = %d, Get found %v", id, i, ok)
		}
	}
	parents := tree.ParentPositions(entries)
	// The index built from entries answers the same from its own map, and
	// refuses entries it was not built from.
	if got, ok := ix.ParentPositions(entries); !ok || !slices.Equal(got, parents) {
		t.Fatalf("Index.ParentPositions = %v (ok %v), ParentPositions %v", got, ok, parents)
	}
	if slices.ContainsFunc(entries, func(e jsonl.Entry) bool { return !e.IsHeader() }) {
		if _, ok := ix.ParentPositions(slices.Clone(entries)); ok {
			t.Fatal("Index.ParentPositions answered for entries it was not built from")
		}
	}
	for i := range entries {
		if entries[i].IsHeader() {
			continue
		}
		want := ix.BranchFrom(&entries[i])
		got, ok := tree.BranchAt(entries, parents, i)
		if !ok || !slices.Equal(got, want) {
			t.Fatalf("BranchAt(%d) = %d entries (ok %v), BranchFrom %d", i, len(got), ok, len(want))
		}
	}
	if len(entries) > 1 {
		// A position that does not fit is refused, not followed.
		bad := slices.Clone(parents)
		for i := range bad {
			if !entries[i].IsHeader() {
				bad[i] = int32(len(entries))
				if _, ok := tree.BranchAt(entries, bad, i); ok {
					t.Fatalf("BranchAt followed a position past the entries")
				}
				break
			}
		}
	}
}

// checkBranch checks a root-to-entry path: it ends at the entry, holds no
// entry twice, and follows parent links.
func checkBranch(t *testing.T, ix *tree.Index, id string, path []*jsonl.Entry, distinct int) {
	t.Helper()
	if id == "" {
		return // Branch("") is nil by definition
	}
	if len(path) == 0 {
		t.Fatalf("Branch(%q) is empty", id)
	}
	if len(path) > distinct {
		t.Fatalf("Branch(%q) has %d entries for %d distinct ids", id, len(path), distinct)
	}
	if last, _ := ix.Get(id); path[len(path)-1] != last {
		t.Fatalf("Branch(%q) does not end at the entry", id)
	}
	seen := map[*jsonl.Entry]bool{}
	for i, e := range path {
		if seen[e] {
			t.Fatalf("Branch(%q) holds %q twice", id, tree.Key(e))
		}
		seen[e] = true
		if i == 0 {
			continue
		}
		p, ok := tree.ParentKey(e)
		if !ok || p != tree.Key(path[i-1]) {
			t.Fatalf("Branch(%q): %q follows %q but its parent is %q", id, tree.Key(e), tree.Key(path[i-1]), p)
		}
	}
}
