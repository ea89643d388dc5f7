//go:build !crash

package testenv

// crashLong is false in ordinary test runs: the crash workloads run a short
// deterministic set. Build with -tags crash (make crash) for the long
// randomized run.
const crashLong = false
