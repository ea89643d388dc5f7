package jsonl_test

import (
	"bytes"
	"testing"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/workload"
)

func benchSession(b *testing.B) []byte {
	b.Helper()
	var buf bytes.Buffer
	if _, err := workload.Write(&buf, workload.Options{Seed: 2, Entries: 20000}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkParseFile indexes a generated 20,000-entry session by its
// envelopes, the core of opening a session.
func BenchmarkParseFile(b *testing.B) {
	data := benchSession(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if p := jsonl.ParseFile(data); len(p.Entries) == 0 {
			b.Fatal("no entries")
		}
	}
}

// BenchmarkCanonical re-encodes every line as JSON.stringify would, the
// cost of a migration rewrite.
func BenchmarkCanonical(b *testing.B) {
	data := benchSession(b)
	p := jsonl.ParseFile(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var out []byte
	for b.Loop() {
		for _, e := range p.Entries {
			out, _ = jsonl.Canonical(out[:0], e.Raw)
		}
	}
}

// BenchmarkParseFileCanonical is BenchmarkParseFile that also checks each
// line's canonical form, as opening a v1 or v2 session for writing does.
func BenchmarkParseFileCanonical(b *testing.B) {
	data := benchSession(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if p, _ := jsonl.ParseFileCanonical(data); len(p.Entries) == 0 {
			b.Fatal("no entries")
		}
	}
}
