package engine_test

import (
	"context"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// BenchmarkForkBranch forks the active branch of the 100,000-entry
// session, as `sessctl fork` does; B/op shows that the new file is
// streamed, not built in memory.
func BenchmarkForkBranch(b *testing.B) {
	path, size := bigSession(b)
	src, err := engine.Open(context.Background(), path, engine.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	leaf, _ := src.LeafID()
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		ns, err := src.ForkBranch(context.Background(), leaf, engine.ForkBranchOptions{Dir: b.TempDir(), Options: engine.Options{Sync: engine.SyncNone}})
		if err != nil {
			b.Fatal(err)
		}
		ns.Close()
	}
}

// BenchmarkForkFrom copies every entry of the 100,000-entry session, as
// `sessctl fork --all` does.
func BenchmarkForkFrom(b *testing.B) {
	path, size := bigSession(b)
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		ns, err := engine.ForkFrom(context.Background(), path, "/home/dev/project", engine.Options{Dir: b.TempDir(), Sync: engine.SyncNone})
		if err != nil {
			b.Fatal(err)
		}
		ns.Close()
	}
}
