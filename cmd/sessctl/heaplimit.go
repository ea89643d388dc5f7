package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// heapFloor is the soft memory limit boundHeap sets: a first search
// index build of 50,000 sessions keeps some 40 MiB live on the heap
// beside its tables (which are mapped outside it), and the garbage
// collector's default would let the heap grow to twice that at its
// peaks.
const heapFloor = 80 << 20

// heapFloorAfterGC is the floor once the heap has been collected: a
// process that has been (a build, not a query) keeps its heap nearer
// what is live, beside the build's tables outside the heap (a first
// build's resident memory peaked at 125-130 MiB under heapFloor).
const heapFloorAfterGC = 64 << 20

var boundOnce sync.Once

// boundHeap gives the process a soft memory limit (debug.SetMemoryLimit)
// of heapFloor (heapFloorAfterGC once collected), or 1.5 times the live
// heap when that is more, checked after every collection: the heap stays
// near the floor while what is live is small, and the collector never
// runs without end for a live heap that has outgrown the floor (a store
// much larger than 50,000 sessions), as a fixed limit would make it.
// GOMEMLIMIT in the environment turns it off. Until the first collection the collector's pacing is off too
// (pacedAfterGC), unless GOGC is in the environment. Called by search,
// whose first build is its largest use of memory; not by serve, whose
// resident index would have the collector run at every few queries (the
// server's CPU for a query doubled under it).
func boundHeap() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	boundOnce.Do(func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var adjust func()
		collected := false // adjust's first call is now, the others after collections
		adjust = func() {
			pacedAfterGC.restore()
			metrics.Read(sample)
			var live int64
			if v := sample[0].Value; v.Kind() == metrics.KindUint64 {
				live = int64(v.Uint64())
			}
			debug.SetMemoryLimit(heapLimit(collected, live))
			collected = true
			// Called again after the next collection.
			runtime.AddCleanup(new([64]byte), func(struct{}) { adjust() }, struct{}{})
		}
		adjust()
	})
	if os.Getenv("GOGC") == "" {
		pacedAfterGC.off()
	}
}

// heapLimit is boundHeap's limit for a live heap of live bytes, before
// the first collection or after one.
func heapLimit(collected bool, live int64) int64 {
	floor := int64(heapFloor)
	if collected {
		floor = heapFloorAfterGC
	}
	return max(floor, live*3/2)
}

// pacedAfterGC turns the collector's pacing (GOGC) off until the next
// collection, when boundHeap's limit is in place: a process that
// allocates less than heapFloor, as a query of a built index does (some
// 30 MiB live), is never collected, where GOGC=100 collected it several
// times from its first 4 MiB (0.22 s against 0.17 s for bench-scale's
// rare word). After the first collection pacing is as it was: a build
// that ran at the limit without it spent twice the system time returning
// memory to the kernel (74.5 s against 60.1 s at 50,000 sessions).
var pacedAfterGC gcPacing

// gcPacing is a GC percent put aside until restore.
type gcPacing struct {
	mu  sync.Mutex
	set bool
	pct int
}

func (p *gcPacing) off() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if old := debug.SetGCPercent(-1); !p.set {
		p.set, p.pct = true, old
	}
}

func (p *gcPacing) isOff() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.set
}

func (p *gcPacing) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.set {
		debug.SetGCPercent(p.pct)
		p.set = false
	}
}
