package testenv

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// PeakHeap runs fn and returns the largest heap it saw in use meanwhile
// (runtime/metrics' heap objects: live and not yet swept), sampled every
// millisecond, above what was in use before. Tests that bound the memory
// of a command or a read assert it (never a time); they lower the GC
// percent so that the peak follows what is held.
func PeakHeap(fn func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if v := read(); v > peak {
				peak = v
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	fn()
	close(stop)
	wg.Wait()
	if v := read(); v > peak {
		peak = v
	}
	if peak < base {
		return 0
	}
	return peak - base
}
