package engine_test

import (
	"context"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// BenchmarkForkBranch forks the active branch of the 100,000-entry
// session, as `sessctl fork` does (reading the source, read-only, and
// writing the new file); B/op shows that the new file is streamed, not
// built in memory.
func BenchmarkForkBranch(b *testing.B) {
	path, size := bigSession(b)
	st := openStore(b, engine.StoreOptions{Sync: engine.SyncNone})
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		ns, err := st.Fork(context.Background(), path, engine.ForkOptions{Branch: true, Dir: b.TempDir()})
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
	st := openStore(b, engine.StoreOptions{Sync: engine.SyncNone})
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		ns, err := st.Fork(context.Background(), path, engine.ForkOptions{Cwd: "/home/dev/project", Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		ns.Close()
	}
}
