package lock

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkAcquireRelease measures one uncontended Acquire and Close: in
// flock mode that includes writing, syncing and removing the owner record;
// in fallback mode creating, syncing and removing the ".excl" file.
func BenchmarkAcquireRelease(b *testing.B) {
	for _, bm := range []struct {
		name    string
		noFlock bool
	}{
		{"flock", false},
		{"fallback", true},
	} {
		b.Run(bm.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "s.jsonl.lock")
			opts := Options{NoFlock: bm.noFlock}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				l, err := Acquire(ctx, path, opts)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
