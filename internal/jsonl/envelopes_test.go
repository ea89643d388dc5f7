package jsonl

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestEnvelopeParts checks that a record written in parts decodes to the
// entries of the parse, attached or detached, and that parts that do not
// follow each other in the file are refused.
func TestEnvelopeParts(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n")
	for i := range 200 {
		fmt.Fprintf(&b, `{"type":"message","id":"e%d","parentId":"e%d","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"x"}}`+"\n", i, i-1)
		if i%7 == 0 {
			b.WriteString("\n") // a blank line: line numbers skip
		}
	}
	data := []byte(b.String())
	p := ParseFile(data)
	if len(p.Entries) != 201 || len(p.Malformed) != 0 {
		t.Fatalf("fixture: %d entries, %d malformed", len(p.Entries), len(p.Malformed))
	}
	split := func(n int) [][]byte {
		var parts [][]byte
		for i := range n {
			lo, hi := len(p.Entries)*i/n, len(p.Entries)*(i+1)/n
			parts = append(parts, AppendEnvelopes(nil, p.Entries[lo:hi]))
		}
		return parts
	}
	for _, n := range []int{1, 2, 4, 7} {
		got, err := DecodeEnvelopeParts(data, split(n))
		if err != nil || !reflect.DeepEqual(got, p.Entries) {
			t.Fatalf("%d parts: %v, entries differ: %v", n, err, err == nil)
		}
		det, err := DecodeDetachedParts(int64(len(data)), split(n))
		if err != nil || len(det) != len(p.Entries) {
			t.Fatalf("%d parts detached: %v", n, err)
		}
		for i := range det {
			off, l := det[i].Span()
			if !det[i].Detached() || det[i].Fill(data[off:off+int64(l)]) != nil || !reflect.DeepEqual(det[i], p.Entries[i]) {
				t.Fatalf("%d parts detached: entry %d differs", n, i)
			}
		}
	}
	parts := split(4)
	parts[1], parts[2] = parts[2], parts[1]
	if _, err := DecodeEnvelopeParts(data, parts); err == nil {
		t.Fatal("parts out of file order decoded")
	}
	parts = split(2)
	parts[1] = append(parts[1], 0)
	if _, err := DecodeDetachedParts(int64(len(data)), parts); err == nil {
		t.Fatal("a part with bytes after its record decoded")
	}
}

// BenchmarkDecodeDetachedParts decodes the envelope record of 100,000
// message entries in four parts, as a reopen from the offset index does.
func BenchmarkDecodeDetachedParts(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}` + "\n")
	for i := range 100000 {
		fmt.Fprintf(&sb, `{"type":"message","id":"%08x","parentId":"%08x","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":"%s"}}`+"\n",
			i*7919, (i-1)*7919, strings.Repeat("x", i%1500))
	}
	data := []byte(sb.String())
	p := ParseFile(data)
	var parts [][]byte
	for i := range 4 {
		lo, hi := len(p.Entries)*i/4, len(p.Entries)*(i+1)/4
		parts = append(parts, AppendEnvelopes(nil, p.Entries[lo:hi]))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeDetachedParts(int64(len(data)), parts); err != nil {
			b.Fatal(err)
		}
	}
}
