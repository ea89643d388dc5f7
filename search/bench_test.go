package search

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/internal/jsonl"
)

// BenchmarkLineDocs extracts the texts of the lines of the sessions in
// $SESSCTL_BENCH_DIR/sessions (make bench's workload), up to 20 MB.
func BenchmarkLineDocs(b *testing.B) {
	dir := os.Getenv("SESSCTL_BENCH_DIR")
	if dir == "" {
		b.Skip("SESSCTL_BENCH_DIR is not set")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "sessions", "*.jsonl"))
	var lines [][]byte
	size := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(l) > 0 {
				lines = append(lines, l)
				size += len(l) + 1
			}
		}
		if size > 20<<20 {
			break
		}
	}
	b.SetBytes(int64(size))
	var docs []doc
	for b.Loop() {
		for _, l := range lines {
			e, err := jsonl.ParseEntry(l)
			if err != nil {
				continue
			}
			docs = lineDocs(&e, docs[:0])
		}
	}
}
