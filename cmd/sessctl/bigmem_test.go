package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/testenv"
	generate "github.com/sessctl/sessctl/internal/workload"
)

// peakHeap is testenv.PeakHeap: the largest heap fn had in use.
var peakHeap = testenv.PeakHeap

// The read commands that go through a session in order hold a small part
// of it at a time (issue 35): show, export in every format, stats, fork
// and tail peak at a heap that grows by a small fraction of a byte for
// each byte of the session, where they held it several times over (show
// of a 166 MB session took 785 MB, an HTML export 1 GB). Each command
// runs on a session of about 16 MB and one of about 64 MB (100 MB and
// 400 MB, the size, in builds with the crash tag: make crash):
// the growth of its peak heap between the two, per byte the session
// grew, must stay under a half (the fixed part, read buffers of a few MB,
// does not count), and the peak on the larger must not exceed its size.
// Measured as the peak heap during the command, sampled every
// millisecond, with the collector running often (so that the peak follows
// what is held), never as time; the bench (scripts/bench-scale.sh)
// measures the processes' RSS on sessions of 400 MB and 1 GB.
func TestLargeSessionMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 80 MB of sessions")
	}
	// About 4.6 KB an entry with these tool results.
	const perEntry = 4600
	targets := []int{16 << 20, 64 << 20}
	if testenv.Stress() {
		targets = []int{100 << 20, 400 << 20}
	} else {
		t.Log("sessions of 16 and 64 MB; make crash runs 100 and 400 MB")
	}
	dir := t.TempDir()
	var files [2]string
	var sizes [2]int64
	old := time.Now().Add(-time.Hour)
	for i, target := range targets {
		files[i] = filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		size, err := generate.WriteFile(files[i], generate.Options{Seed: uint64(7 + i), Entries: target / perEntry, ToolResultMin: 8000, ToolResultMax: 24000})
		if err != nil {
			t.Fatal(err)
		}
		sizes[i] = size
		if err := os.Chtimes(files[i], old, old); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("PI_CODING_AGENT_DIR", t.TempDir())
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	for _, args := range [][]string{
		{"show"},
		{"show", "--json"},
		{"show", "--full"},
		{"export", "--format", "md"},
		{"export", "--format", "json"},
		{"export", "--format", "html"},
		{"stats"},
		{"fork", "--cwd", "/tmp/forked"},
		{"fork", "--all", "--cwd", "/tmp/forked"},
		{"tail", "-n", "1000"},
	} {
		var peaks [2]uint64
		for i, p := range files {
			var code int
			peaks[i] = peakHeap(func() {
				code = run(context.Background(), append(slices.Clone(args), p), strings.NewReader(""), io.Discard, io.Discard)
			})
			if code != exitOK {
				t.Fatalf("%v %s: exit %d", args, p, code)
			}
		}
		growth := (float64(peaks[1]) - float64(peaks[0])) / float64(sizes[1]-sizes[0])
		t.Logf("%v: peak heap %.1f MB for %.1f MB, %.1f MB for %.1f MB: %.3f bytes a byte", args,
			float64(peaks[0])/(1<<20), float64(sizes[0])/(1<<20), float64(peaks[1])/(1<<20), float64(sizes[1])/(1<<20), growth)
		if growth > 0.5 {
			t.Errorf("%v: the peak heap grows by %.3f bytes for each byte of the session, more than 0.5", args, growth)
		}
		if peaks[1] > uint64(sizes[1]) {
			t.Errorf("%v: peak heap %d bytes for a %d-byte session", args, peaks[1], sizes[1])
		}
	}
}
