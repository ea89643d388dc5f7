package testenv

import (
	"errors"
	"flag"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// The flags of the randomized crash workloads. Every test binary that
// imports this package accepts them, so `go test ./... -crash.time=10m`
// reaches all of them.
var (
	crashSeed      = flag.Uint64("crash.seed", 0, "seed of the first crash workload (0: 1 in short runs, the clock in long ones)")
	crashWorkloads = flag.Int("crash.workloads", 0, "number of crash workloads (0: by build; long runs go on for -crash.time)")
	crashTime      = flag.Duration("crash.time", 2*time.Minute, "how long the long crash run (-tags crash) goes on")
	crashTrace     = flag.Bool("crash.trace", false, "log every operation and filesystem call of the crash workloads")
)

// ErrPowerCut is what a crash workload's filesystem hook returns for every
// call once it has cut the power.
var ErrPowerCut = errors.New("simulated power cut")

var words = strings.Fields(`the a file function error test build run go module session entry append
	sync crash fsync rename directory parser tree branch compaction summary token model
	<div> a&b x<y "quoted" back\slash tab	here naïve café 日本語 emoji🙂 line\u2028sep
	if err != nil { return err } func main() {} SELECT * FROM t; ../../etc/passwd`)

// RandomText returns minWords to maxWords random words, with the odd
// newline, for crash workloads: among them HTML, quotes, backslashes, tabs,
// non-ASCII letters, an emoji, U+2028 and path tricks, which every encoder
// on the way must keep.
func RandomText(r *rand.Rand, minWords, maxWords int) string {
	n := minWords + r.IntN(maxWords-minWords+1)
	var b strings.Builder
	for i := range n {
		if i > 0 {
			if r.IntN(12) == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

// Crash is the plan of one test's run of randomized crash workloads.
type Crash struct {
	Seed     uint64    // the first workload's seed; workload i uses Seed+i
	N        int       // how many workloads to run at most
	Deadline time.Time // when a long run stops; zero in ordinary runs
	Trace    bool      // log every operation (-crash.trace)
}

// More reports whether workload i is to run.
func (c Crash) More(i int) bool {
	return i < c.N && (c.Deadline.IsZero() || time.Now().Before(c.Deadline))
}

// CrashPlan returns the plan of a test's crash workloads. An ordinary run
// is deterministic: seed 1 (or -crash.seed), normal workloads (short
// ones with -short), or -crash.workloads. A build with -tags crash (make
// crash) runs from a seed taken from the clock for share of -crash.time.
// The plan is logged with how to rerun one workload.
func CrashPlan(t testing.TB, short, normal int, share float64) Crash {
	t.Helper()
	c := Crash{Seed: *crashSeed, N: *crashWorkloads, Trace: *crashTrace}
	switch {
	case crashLong && c.N == 0:
		c.Deadline = time.Now().Add(time.Duration(float64(*crashTime) * share))
		c.N = 1 << 30
	case c.N == 0 && testing.Short():
		c.N = short
	case c.N == 0:
		c.N = normal
	}
	if c.Seed == 0 {
		c.Seed = 1
		if crashLong {
			c.Seed = uint64(time.Now().UnixNano())
		}
	}
	t.Logf("crash workloads: first seed %d (rerun one with -crash.seed=S -crash.workloads=1)", c.Seed)
	return c
}

// Stress reports whether the stress cases run at full size: in builds
// with the crash tag (make crash, which CI runs), not in every go test.
// A test scales itself down, or skips with a message naming make crash,
// when it returns false.
func Stress() bool { return crashLong }
