package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestBoundHeap: search runs under a soft memory limit of heapFloor,
// unpaced until its first collection, raised to 1.5 times the live heap
// after a collection that finds more live, so that a large store's build
// is not all garbage collection.
func TestBoundHeap(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: boundHeap leaves the limit to it")
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	pct := debug.SetGCPercent(100)
	defer debug.SetGCPercent(pct)
	boundHeap()
	if got := debug.SetGCPercent(-1); got != -1 && os.Getenv("GOGC") == "" {
		t.Errorf("GC percent %d before the first collection, want -1 (off)", got)
	}
	if got := debug.SetMemoryLimit(-1); got < heapFloor {
		t.Fatalf("limit %d, want at least %d", got, heapFloor)
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
}
