//go:build !crash

package engine_test

// crashLong is false in ordinary test runs: TestCrashWorkloads runs a
// short deterministic set. Build with -tags crash (make crash) for the
// long randomized run.
const crashLong = false
