package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	generate "github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/message"
)

// Benchmarks use the workloads `make bench` generates in
// $SESSCTL_BENCH_DIR (big.jsonl, sessions/), or generate their own in a
// temporary directory.
var benchFiles = struct {
	once    sync.Once
	tmp     string
	dir     string
	big     string
	size    int64
	dirOnce sync.Once
	store   string
	err     error
}{}

func benchDir(b *testing.B) string {
	b.Helper()
	benchFiles.once.Do(func() {
		if d := os.Getenv("SESSCTL_BENCH_DIR"); d != "" {
			benchFiles.dir = d
			return
		}
		benchFiles.tmp, benchFiles.err = os.MkdirTemp("", "sessctl-bench-")
		benchFiles.dir = benchFiles.tmp
	})
	if benchFiles.err != nil {
		b.Fatal(benchFiles.err)
	}
	return benchFiles.dir
}

// bigSession returns a generated 100,000-entry session (about 165 MB).
func bigSession(b *testing.B) (string, int64) {
	b.Helper()
	p := filepath.Join(benchDir(b), "big.jsonl")
	st, err := os.Stat(p)
	if err != nil {
		n, err := generate.WriteFile(p, generate.Options{Seed: 1, Entries: 100000})
		if err != nil {
			b.Fatal(err)
		}
		return p, n
	}
	return p, st.Size()
}

// sessionStore returns a directory of 5,000 generated sessions of about
// 50 KB each (254 MB).
func sessionStore(b *testing.B) string {
	b.Helper()
	p := filepath.Join(benchDir(b), "sessions")
	if _, err := os.Stat(p); err != nil {
		if _, err := generate.Dir(p, 5000, 50000, 1); err != nil {
			b.Fatal(err)
		}
	}
	return p
}

func benchList(b *testing.B, noIndex bool) {
	dir := sessionStore(b)
	st := openStore(b, engine.StoreOptions{Dir: dir})
	if !noIndex {
		if _, err := st.List(context.Background(), "/", engine.ListOptions{EveryCwd: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		infos, err := st.List(context.Background(), "/", engine.ListOptions{NoIndex: noIndex, EveryCwd: true})
		if err != nil {
			b.Fatal(err)
		}
		n = len(infos)
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "sessions/s")
}

// BenchmarkListScan lists 5,000 sessions reading every file.
func BenchmarkListScan(b *testing.B) { benchList(b, true) }

// BenchmarkListIndexed lists 5,000 sessions from a warm list index.
func BenchmarkListIndexed(b *testing.B) { benchList(b, false) }

// BenchmarkOpenContext opens the 100,000-entry session read-only and builds
// its context, as `sessctl context` does the first time (a full parse: no
// offset index).
func BenchmarkOpenContext(b *testing.B) {
	benchOpenFull(b, true)
	b.ReportMetric(float64(100000*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkReadContext reads the context of the 100,000-entry session
// with ReadContext, as `sessctl context` does the first time: parsed in
// pieces, message entries detached, the context's lines read back (no
// offset index).
func BenchmarkReadContext(b *testing.B) {
	path, size := bigSession(b)
	loopReadContext(b, path, size, engine.StoreOptions{NoOffsetIndex: true})
	b.ReportMetric(float64(100000*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// loopReadContext is the timed loop of the ReadContext benchmarks.
func loopReadContext(b *testing.B, path string, size int64, opts engine.StoreOptions) {
	st := openStore(b, opts)
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		fc, err := engine.ReadContextIn(context.Background(), st, path, "")
		if err != nil {
			b.Fatal(err)
		}
		if len(fc.Context.Messages) == 0 {
			b.Fatal("empty context")
		}
	}
}

// benchOpenFull opens the 100,000-entry session read-only with a full
// parse (no offset index), and builds its context when withContext.
func benchOpenFull(b *testing.B, withContext bool) {
	path, size := bigSession(b)
	loopOpen(b, path, size, engine.StoreOptions{NoOffsetIndex: true}, withContext)
}

// loopOpen is the timed loop of the Open benchmarks: a read-only Open in
// a store with opts, the context when withContext, Close.
func loopOpen(b *testing.B, path string, size int64, opts engine.StoreOptions, withContext bool) {
	st := openStore(b, opts)
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		s, err := st.Open(context.Background(), path, engine.OpenOptions{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		if withContext {
			if c := s.Context(); len(c.Messages) == 0 {
				b.Fatal("empty context")
			}
		}
		s.Close()
	}
}

var benchMsg = []byte(`{"role":"assistant","content":[{"type":"text","text":"The build fails because codec.go uses utf16 without importing it; add the import and rerun the tests."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1200,"output":80,"cacheRead":0,"cacheWrite":0,"totalTokens":1280,"cost":{"input":0.0036,"output":0.0012,"cacheRead":0,"cacheWrite":0,"total":0.0048}},"stopReason":"stop","timestamp":1772355600000}`)

// benchTyped is benchMsg built as a typed message.
var benchTyped = message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5",
	[]message.Block{message.NewText("The build fails because codec.go uses utf16 without importing it; add the import and rerun the tests.")},
	message.NewUsage(1200, 80, 0, 0, message.Cost{Input: 0.0036, Output: 0.0012, Total: 0.0048}), message.StopStop, time.UnixMilli(1772355600000))

// benchAppend appends benchMsg, decoded once (a message held as JSON).
func benchAppend(b *testing.B, sync engine.SyncPolicy) { benchAppendOf(b, sync, raw(benchMsg)) }

// BenchmarkAppendTypedNoSync appends benchMsg as a typed message, encoded
// into its line, without fsync.
func BenchmarkAppendTypedNoSync(b *testing.B) { benchAppendOf(b, engine.SyncNone, benchTyped) }

func benchAppendOf(b *testing.B, sync engine.SyncPolicy, msg message.Message) {
	dir := b.TempDir()
	s, err := openStore(b, engine.StoreOptions{Dir: dir, Sync: sync}).Create(context.Background(), "/home/dev/project", engine.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.SetBytes(int64(len(benchMsg) + 100))
	for b.Loop() {
		if _, err := s.AppendMessage(msg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkAppendNoSync appends assistant messages without fsync (pi's
// behaviour).
func BenchmarkAppendNoSync(b *testing.B) { benchAppend(b, engine.SyncNone) }

// BenchmarkAppendSync appends with an fsync per append (the default).
func BenchmarkAppendSync(b *testing.B) { benchAppend(b, engine.SyncEach) }

// benchReopen opens the 100,000-entry session read-only again and again
// with its offset index (made by a first open, outside the timing) in a
// cache directory of its own, building the context when withContext.
func benchReopen(b *testing.B, withContext bool) {
	opts := engine.StoreOptions{CacheDir: b.TempDir()}
	path, size := indexedBigSession(b, opts.CacheDir, func(path string) error {
		s, err := openStore(b, opts).Open(context.Background(), path, engine.OpenOptions{ReadOnly: true})
		if err == nil {
			s.Close()
		}
		return err
	})
	loopOpen(b, path, size, opts, withContext)
}

// indexedBigSession returns the 100,000-entry session, aged so that it
// may be indexed, after first (a first read, outside the timing) kept its
// offset index in cacheDir.
func indexedBigSession(b *testing.B, cacheDir string, first func(path string) error) (string, int64) {
	path, size := bigSession(b)
	old := time.Now().Add(-time.Hour) // old enough to be indexed
	if err := os.Chtimes(path, old, old); err != nil {
		b.Fatal(err)
	}
	if err := first(path); err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(engine.OffsetIndexPath(cacheDir, path)); err != nil {
		b.Fatalf("no offset index: %v", err)
	}
	return path, size
}

// BenchmarkReopenIndexed opens the 100,000-entry session (165 MB)
// read-only with a warm offset index: the file is read, not parsed.
func BenchmarkReopenIndexed(b *testing.B) { benchReopen(b, false) }

// BenchmarkReopenIndexedContext is BenchmarkReopenIndexed and the context.
func BenchmarkReopenIndexedContext(b *testing.B) { benchReopen(b, true) }

// BenchmarkReadContextIndexed is BenchmarkReadContext with the offset
// index a first read kept (outside the timing): the index is read, and
// only the context's lines and the entries that are not messages are
// read from the file.
func BenchmarkReadContextIndexed(b *testing.B) {
	opts := engine.StoreOptions{CacheDir: b.TempDir()}
	path, size := indexedBigSession(b, opts.CacheDir, func(path string) error {
		_, err := engine.ReadContextIn(context.Background(), openStore(b, opts), path, "")
		return err
	})
	loopReadContext(b, path, size, opts)
}

// BenchmarkOpenFull is BenchmarkReopenIndexed without the index: the
// read-only open alone, with a full parse.
func BenchmarkOpenFull(b *testing.B) { benchOpenFull(b, false) }

// BenchmarkListFirst lists 5,000 sessions with no list index yet, as the
// first `sessctl list` of a store does: reading every file and writing
// the list and texts indexes; against BenchmarkListScan (reading alone),
// what the indexes cost a first listing.
func BenchmarkListFirst(b *testing.B) {
	dir := sessionStore(b)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		b.StopTimer()
		st := openStore(b, engine.StoreOptions{Dir: dir, CacheDir: b.TempDir()})
		b.StartTimer()
		infos, err := st.List(context.Background(), "/", engine.ListOptions{EveryCwd: true})
		if err != nil {
			b.Fatal(err)
		}
		n = len(infos)
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "sessions/s")
}
