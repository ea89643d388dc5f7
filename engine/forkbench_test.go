package engine_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
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

// BenchmarkForkFileAll is `sessctl fork --all`: Store.ForkFile of every
// entry, whose lines the kernel copies (copy_file_range) and the fork
// checks after; BenchmarkForkCopyBaseline is the same bytes copied as cp
// copies them, the floor.
func BenchmarkForkFileAll(b *testing.B) {
	path, size := bigSession(b)
	st := openStore(b, engine.StoreOptions{Sync: engine.SyncNone})
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		if _, err := st.ForkFile(context.Background(), path, engine.ForkOptions{Dir: b.TempDir()}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkForkCopyBaseline copies the session file as cp does (one
// kernel copy into a new file, synced): what BenchmarkForkFileAll is
// measured against.
func BenchmarkForkCopyBaseline(b *testing.B) {
	path, size := bigSession(b)
	b.SetBytes(size)
	for b.Loop() {
		src, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(b.TempDir(), "copy.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			b.Fatal(err)
		}
		if err := dst.Sync(); err != nil {
			b.Fatal(err)
		}
		dst.Close()
		src.Close()
	}
}
