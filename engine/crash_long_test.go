//go:build crash

package engine_test

// crashLong makes TestCrashWorkloads run for -crash.time from a
// time-based seed (make crash).
const crashLong = true
