package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestBoundHeap: search runs under a soft memory limit of heapFloor,
// unpaced until its first collection, raised to 1.5 times the live heap
// after a collection that finds more live, so that a large store's build
// is not all garbage collection, and down to heapFloorAfterGC after one
// that finds little.
func TestBoundHeap(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: boundHeap leaves the limit to it")
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	paced := os.Getenv("GOGC") == "" // boundHeap turns pacing off
	pct := debug.SetGCPercent(100)
	defer debug.SetGCPercent(pct)
	cycles := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(cycles)
	before := cycles[0].Value.Uint64()
	boundHeap()
	off := pacedAfterGC.isOff()
	metrics.Read(cycles)
	// (A collection between the two may have given pacing back already.)
	if collected := cycles[0].Value.Uint64() != before; paced && !off && !collected {
		t.Error("pacing on before the first collection, want it off")
	}
	// (heapFloor until the first collection since boundHeap's first
	// call, which another test may have made: TestHeapLimit.)
	if got := debug.SetMemoryLimit(-1); got < heapFloorAfterGC {
		t.Fatalf("limit %d, want at least %d", got, heapFloorAfterGC)
	}
	live := make([][]byte, 96) // 96 MiB: past what heapFloor allows
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) < 3*96<<20/2 {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d with 96 MiB live, want at least 1.5 times that", debug.SetMemoryLimit(-1))
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(live)
	// A collection gives pacing back (in a cleanup that runs after it).
	for pacedAfterGC.isOff() {
		if time.Now().After(deadline) {
			t.Fatal("pacing still off after collections")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d after a collection, want 100 as before", got)
	}
	// With little live again (live is not used after its KeepAlive), the
	// limit comes down to the floor of a process that has been
	// collected, not heapFloor.
	for debug.SetMemoryLimit(-1) != heapFloorAfterGC {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d after the live heap was let go, want %d", debug.SetMemoryLimit(-1), heapFloorAfterGC)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHeapLimit: the floor is heapFloor before the first collection
// (a query, which allocates less, is never collected) and
// heapFloorAfterGC after (a build keeps its heap nearer what is live),
// and the limit is 1.5 times the live heap when that is more.
func TestHeapLimit(t *testing.T) {
	for _, c := range []struct {
		collected bool
		live      int64
		want      int64
	}{
		{false, 0, heapFloor},
		{false, 20 << 20, heapFloor},
		{true, 20 << 20, heapFloorAfterGC},
		{true, 50 << 20, 75 << 20},
		{false, 100 << 20, 150 << 20},
		{true, 100 << 20, 150 << 20},
	} {
		if got := heapLimit(c.collected, c.live); got != c.want {
			t.Errorf("heapLimit(%v, %d MiB) = %d MiB, want %d MiB", c.collected, c.live>>20, got>>20, c.want>>20)
		}
	}
}

// TestGCPacing: off puts the percent aside once (a second off keeps the
// first one's), restore gives it back, and a restore with nothing put
// aside changes nothing.
func TestGCPacing(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(70))
	var p gcPacing
	p.off()
	p.off()
	if !p.isOff() {
		t.Fatal("not off after off")
	}
	p.restore()
	if got := debug.SetGCPercent(55); got != 70 {
		t.Errorf("GC percent %d after restore, want 70", got)
	}
	p.restore()
	if got := debug.SetGCPercent(70); got != 55 {
		t.Errorf("GC percent %d after a second restore, want 55 (unchanged)", got)
	}
}
