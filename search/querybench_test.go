package search

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/layout"
)

// BenchmarkWarmQuery runs make bench's search query (100 hits) against an
// index in $SESSCTL_BENCH_DIR/search-index that is up to date with
// $SESSCTL_BENCH_DIR/search-sessions (or sessions): what a warm `sessctl search` does, less process start.
func BenchmarkWarmQuery(b *testing.B) {
	dir := os.Getenv("SESSCTL_BENCH_DIR")
	if dir == "" {
		b.Skip("SESSCTL_BENCH_DIR is not set")
	}
	store := filepath.Join(dir, "search-sessions")
	if _, err := os.Stat(store); err != nil {
		store = filepath.Join(dir, "sessions")
	}
	ctx := context.Background()
	x, err := Open(ctx, Options{Dir: filepath.Join(dir, "search-index")})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	q := Query{Text: "jsonPointer OR goroutineFunction OR resultJson", Stores: []layout.Place{{Format: layout.FormatJSONL, Root: store}}, Limit: 100}
	run := func() int {
		n := 0
		for _, err := range x.Search(ctx, q) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		return n
	}
	if run() == 0 {
		b.Fatal("no hits")
	}
	for b.Loop() {
		run()
	}
}
