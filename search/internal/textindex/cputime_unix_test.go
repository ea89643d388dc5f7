//go:build unix

package textindex

import (
	"syscall"
	"time"
)

// cpuTime is the process's CPU time so far (user and system), for the
// benchmarks' MB per CPU-second.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
