//go:build !unix

package textindex

import "time"

// cpuTime is 0 where the process's CPU time is not read: the benchmarks'
// MB per CPU-second are then not reported.
func cpuTime() time.Duration { return 0 }
