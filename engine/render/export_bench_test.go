package render

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/workload"
)

// sink counts what it is given and keeps none of it; it has no ReadFrom,
// so the copy baseline and the exports write through the same Write.
type sink struct{ n int64 }

func (s *sink) Write(p []byte) (int, error) { s.n += int64(len(p)); return len(p), nil }

// benchEntries is the size of the generated session of BenchmarkExport
// (SESSCTL_BENCH_EXPORT_ENTRIES overrides it; 100,000 is ~165 MB).
func benchEntries(b *testing.B) int {
	if s := os.Getenv("SESSCTL_BENCH_EXPORT_ENTRIES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	return 100000
}

// BenchmarkExport exports a large generated session as the CLI does (a
// View of the file, its leaf's branch) to a sink, beside an io.Copy of
// the same file: the MB/s are of the session file's bytes, so the ratio
// of the two is the export's cost against reading the file.
func BenchmarkExport(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "big.jsonl")
	size, err := workload.WriteFile(path, workload.Options{Seed: 1, Entries: benchEntries(b)})
	if err != nil {
		b.Fatal(err)
	}
	// A file older than the offset index's racy window, so that the
	// exports after the first read the envelopes from the index, as a
	// second export of a session does; "cold" exports parse it each time.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		b.Fatal(err)
	}
	warm, err := engine.OpenStore(b.Context(), engine.StoreOptions{Dir: dir, Sync: engine.SyncNone, CacheDir: filepath.Join(b.TempDir(), "cache")})
	if err != nil {
		b.Fatal(err)
	}
	cold, err := engine.OpenStore(b.Context(), engine.StoreOptions{Dir: dir, Sync: engine.SyncNone, NoOffsetIndex: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(size)
		defer reportCPU(b, cpuTime())
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(&sink{}, f); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	for _, r := range []struct {
		name string
		st   *engine.Store
		fn   func(io.Writer, *Session, []*engine.Entry, Options) error
	}{{"json", warm, JSON}, {"json-cold", cold, JSON}, {"markdown", warm, Markdown}, {"html", warm, HTML}} {
		b.Run(r.name, func(b *testing.B) {
			b.SetBytes(size)
			var out int64
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				v, err := r.st.View(b.Context(), path)
				if err != nil {
					b.Fatal(err)
				}
				s := &sink{}
				if err := r.fn(s, SnapshotView(v), v.BranchPath(""), Options{}); err != nil {
					b.Fatal(err)
				}
				v.Close()
				out = s.n
			}
			b.ReportMetric(float64(out)/float64(size), "out/in")
		})
	}
}

// reportCPU reports the process's CPU seconds per operation since start
// (every thread: the View's read-ahead, the garbage collector).
func reportCPU(b *testing.B, start time.Duration) {
	if start == 0 || b.N == 0 {
		return
	}
	b.ReportMetric((cpuTime()-start).Seconds()/float64(b.N), "cpu-s/op")
}
