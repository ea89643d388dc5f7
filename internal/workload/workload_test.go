package workload

import (
	"bytes"
	"testing"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/tree"
)

func TestWriteIsDeterministicAndValid(t *testing.T) {
	for _, v := range []int{3, 1} {
		var a, b bytes.Buffer
		o := Options{Seed: 7, Entries: 3000, Version: v, ImageEvery: 1000}
		if _, err := Write(&a, o); err != nil {
			t.Fatal(err)
		}
		if _, err := Write(&b, o); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("v%d: same seed gave different bytes", v)
		}
		p := jsonl.ParseFile(a.Bytes())
		if len(p.Malformed) != 0 || p.Tail != jsonl.TailClean {
			t.Fatalf("v%d: generated file has %d malformed lines, tail %v", v, len(p.Malformed), p.Tail)
		}
		if got := len(p.Entries) - 1; got != o.Entries {
			t.Errorf("v%d: %d entries, want %d", v, got, o.Entries)
		}
		for _, e := range p.Entries[1:] {
			if !jsonl.IsCanonical(e.Raw) {
				t.Fatalf("v%d: line %d is not what JSON.stringify writes", v, e.Line)
			}
		}
		if v == 3 {
			ix := tree.Build(p.Entries)
			seen := map[string]bool{}
			for _, e := range ix.Entries() {
				if seen[e.ID] {
					t.Fatalf("duplicate id %s", e.ID)
				}
				seen[e.ID] = true
				if p, ok := tree.ParentKey(e); ok && !ix.Has(p) {
					t.Fatalf("entry %s has a missing parent %s", e.ID, p)
				}
			}
			if len(ix.LeafBranch()) == 0 {
				t.Fatal("no branch at the leaf")
			}
		}
	}
}
