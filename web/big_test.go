package web

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/internal/workload"
)

// heapPeak runs f and returns the most heap in use, above what was in use
// before it, sampled every millisecond while it ran.
func heapPeak(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
				peak.Store(ms.HeapInuse - base)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	f()
	close(stop)
	wg.Wait()
	return peak.Load()
}

// TestBigSessionIsReadByPage opens the page of a large session (64 MB;
// 1 GB with testenv.Stress) and checks that the heap never held anything
// near the file: message entries are kept as their envelopes and read
// back for the page shown.
func TestBigSessionIsReadByPage(t *testing.T) {
	entries := 40000
	if testenv.Stress() {
		entries = 600000
	}
	s := newServer(t, Options{})
	dir := filepath.Join(s.root, "--w-big--")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "2026-03-01T09-00-00-000Z_big.jsonl")
	size, err := workload.WriteFile(file, workload.Options{Seed: 7, Entries: entries})
	if err != nil {
		t.Fatal(err)
	}
	page := s.page(file)
	// The listing is the engine's (Store.List reads pi's list fields from
	// each file); it runs once in the background, not for each page, and
	// is left out of the measure.
	s.h.list.invalidate()
	s.h.list.wait(2 * time.Minute)
	old := debug.SetGCPercent(25)
	defer debug.SetGCPercent(old)
	var body string
	peak := heapPeak(func() { body = s.mustGet(page) })
	t.Logf("%s session, %d entries: heap peak %s above the start", fmtMB(size), entries, fmtMB(int64(peak)))
	if got := len(entryIDs(body)); got != entriesPerPage {
		t.Errorf("the page shows %d entries", got)
	}
	if !strings.Contains(body, "(read by page)") {
		t.Error("the session was not read by page")
	}
	if peak > uint64(size)/2 {
		t.Errorf("opening a %s session took %s of heap: it was held whole", fmtMB(size), fmtMB(int64(peak)))
	}
	// Other pages of its branch, the first one too, cost a page.
	peak = heapPeak(func() { body = s.mustGet(page + "?start=0") })
	if got := len(entryIDs(body)); got != entriesPerPage || peak > uint64(size)/4 {
		t.Errorf("the first page: %d entries, heap peak %s", got, fmtMB(int64(peak)))
	}
}

func fmtMB(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }
