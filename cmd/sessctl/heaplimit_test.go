package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestBoundHeap: search runs under a soft memory limit of
// heapFloor, raised to 1.5 times the live heap after a collection that finds
// more live, so that a large store's build is not all garbage collection.
func TestBoundHeap(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: boundHeap leaves the limit to it")
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	boundHeap()
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
}
