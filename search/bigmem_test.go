package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/testenv"
	generate "github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/layout"
)

// TestLargeSessionMemory: a search holds a line of a session at a time,
// as show, export and stats do (issue 39, item 5: a search of one 400 MB
// session peaked at 1.15-1.29 GB, 850 MB without the index: the file was
// read whole, and its texts held until the end of the transaction). A
// search that builds the index, one that uses it, and one without it run
// on a session of about 8 MB and one of about 32 MB (100 and 400 MB
// under make crash, 4 and 16 MB under the race detector): the growth of the peak heap between the two, per
// byte the session grew, must stay under a half, and the peak on the
// larger must not exceed its size. Measured as the peak heap, never as
// time.
func TestLargeSessionMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 40 MB of sessions")
	}
	const perEntry = 4600
	targets := []int{8 << 20, 32 << 20}
	switch {
	case testenv.Stress():
		targets = []int{100 << 20, 400 << 20}
	case raceEnabled:
		targets = []int{4 << 20, 16 << 20}
	}
	// The fixed part (a read chunk, the texts written at once) is made
	// small beside the smaller session.
	defer func(a, b, c int) { readChunk, pendingMax, feedText = a, b, c }(readChunk, pendingMax, feedText)
	readChunk, pendingMax, feedText = 1<<20, 1<<20, 256<<10
	var roots [2]string
	var sizes [2]int64
	old := time.Now().Add(-time.Hour)
	for i, target := range targets {
		roots[i] = filepath.Join(t.TempDir(), "sessions")
		p := filepath.Join(roots[i], "--w--", fmt.Sprintf("2026-01-01T00-00-00-000Z_s%d.jsonl", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		size, err := generate.WriteFile(p, generate.Options{Seed: uint64(7 + i), Entries: target / perEntry, ToolResultMin: 8000, ToolResultMax: 24000})
		if err != nil {
			t.Fatal(err)
		}
		sizes[i] = size
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	const query = `"session file"`
	for _, mode := range []string{"build the index", "use the index", "no index"} {
		var peaks [2]uint64
		dirs := [2]string{t.TempDir(), t.TempDir()}
		for i := range roots {
			o := Options{Dir: filepath.Join(dirs[i], "index"), NoIndex: mode == "no index"}
			if mode == "use the index" {
				x, err := Open(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				for _, err := range x.Search(context.Background(), Query{Text: query, Stores: []layout.Place{{Format: layout.FormatJSONL, Root: roots[i]}}}) {
					if err != nil {
						t.Fatal(err)
					}
				}
				x.Close()
			}
			hits := 0
			peaks[i] = testenv.PeakHeap(func() {
				x, err := Open(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				defer x.Close()
				for _, err := range x.Search(context.Background(), Query{Text: query, Stores: []layout.Place{{Format: layout.FormatJSONL, Root: roots[i]}}}) {
					if err != nil {
						t.Fatal(err)
					}
					hits++
				}
			})
			if hits == 0 {
				t.Fatalf("%s: no hits for %s", mode, query)
			}
			t.Logf("%s: %d hits in %.1f MB, peak heap %.1f MB", mode, hits, float64(sizes[i])/(1<<20), float64(peaks[i])/(1<<20))
		}
		growth := (float64(peaks[1]) - float64(peaks[0])) / float64(sizes[1]-sizes[0])
		if growth > 0.5 {
			t.Errorf("%s: the peak heap grows by %.3f bytes for each byte of the session, more than 0.5", mode, growth)
		}
		if peaks[1] > uint64(sizes[1]) {
			t.Errorf("%s: peak heap %d bytes for a %d-byte session", mode, peaks[1], sizes[1])
		}
	}
}
