// Package testenv is what the module's tests share about their
// surroundings (test code only; no library imports it):
//
//   - Corpus and CorpusFiles find the conformance corpora in
//     ../shared/conformance beside the checkout. Where a corpus is absent
//     (a fresh clone) the test is skipped, or CorpusFiles gives no seeds,
//     with a message saying so; with SESSCTL_REQUIRE_CONFORMANCE=1 (CI)
//     it fails instead.
//   - Pi finds the reference pi release (PiVersion, the newest) and Node
//     for tests that run pi beside sessctl, PiCorpus the release the
//     corpus was recorded with (PiCorpusVersion), skipping without them,
//     failing with SESSCTL_REQUIRE_PI=1. PiGenerate and PiReference run
//     the scripts that write random sessions with pi's own SessionManager
//     and report pi's view of them (state, listing, compaction, branched
//     sessions), for the differential tests.
//   - MinIO starts the real S3-compatible server the replication tests
//     run against (one per test binary, stopped when Main's tests end;
//     NewMinIO gives a test its own, to kill and restart), skipping
//     without the binary, failing with SESSCTL_REQUIRE_MINIO=1.
//   - Chromium finds a headless browser for the web viewer's tests and
//     NewBrowser drives it over the DevTools protocol on a pipe (navigate,
//     evaluate, wait, screenshot), skipping without one, failing with
//     SESSCTL_REQUIRE_BROWSER=1.
//   - Tmpfs mounts a small tmpfs, a real full disk, skipping where
//     mounting is not permitted (not root), failing with
//     SESSCTL_REQUIRE_TMPFS=1.
//   - Main and Command are the one way a test runs its own binary as a
//     child process (a writer to kill, a lock holder, the CLI under a
//     signal or another user): each package that needs one has a TestMain
//     in main_test.go that calls Main with its named children, and the
//     test starts one with Command.
//   - PiHeader, PiMessage, Lines and WriteFile make small session files
//     by hand.
//   - CrashPlan reads the -crash.* flags and the crash build tag of the
//     randomized crash workloads (make crash).
//
// It never prints and never exits: failures go through testing.TB.
package testenv
