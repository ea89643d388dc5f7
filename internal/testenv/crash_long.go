//go:build crash

package testenv

// crashLong makes the crash workloads run for their share of -crash.time
// from a time-based seed (make crash).
const crashLong = true
