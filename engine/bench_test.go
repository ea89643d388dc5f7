package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sessctl/sessctl/engine"
	generate "github.com/sessctl/sessctl/internal/workload"
)

// benchFiles generates the benchmark workloads once per process.
var benchFiles = struct {
	once sync.Once
	dir  string
	big  string
	size int64
	err  error
}{}

// bigSession returns a generated 100,000-entry session (about 165 MB).
func bigSession(b *testing.B) (string, int64) {
	b.Helper()
	benchFiles.once.Do(func() {
		benchFiles.dir, benchFiles.err = os.MkdirTemp("", "sessctl-bench-")
		if benchFiles.err != nil {
			return
		}
		benchFiles.big = filepath.Join(benchFiles.dir, "big.jsonl")
		benchFiles.size, benchFiles.err = generate.WriteFile(benchFiles.big, generate.Options{Seed: 1, Entries: 100000})
	})
	if benchFiles.err != nil {
		b.Fatal(benchFiles.err)
	}
	return benchFiles.big, benchFiles.size
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchFiles.dir != "" {
		os.RemoveAll(benchFiles.dir)
	}
	os.Exit(code)
}

// BenchmarkOpenContext opens the 100,000-entry session read-only and builds
// its context, as `sessctl context` does.
func BenchmarkOpenContext(b *testing.B) {
	path, size := bigSession(b)
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		s, err := engine.Open(context.Background(), path, engine.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		if c := s.Context(); len(c.Messages) == 0 {
			b.Fatal("empty context")
		}
		s.Close()
	}
	b.ReportMetric(float64(100000*b.N)/b.Elapsed().Seconds(), "entries/s")
}

var benchMsg = json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"The build fails because codec.go uses utf16 without importing it; add the import and rerun the tests."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1200,"output":80,"cacheRead":0,"cacheWrite":0,"totalTokens":1280,"cost":{"input":0.0036,"output":0.0012,"cacheRead":0,"cacheWrite":0,"total":0.0048}},"stopReason":"stop","timestamp":1772355600000}`)

func benchAppend(b *testing.B, sync engine.SyncPolicy) {
	dir := b.TempDir()
	s, err := engine.Create(context.Background(), "/home/dev/project", engine.Options{Dir: dir, Sync: sync})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.SetBytes(int64(len(benchMsg) + 100))
	for b.Loop() {
		if _, err := s.AppendMessage(benchMsg); err != nil {
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
