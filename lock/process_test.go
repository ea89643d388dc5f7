package lock

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

func TestSecondProcessGetsErrLocked(t *testing.T) {
	t.Parallel()
	path := lockPath(t)
	h := startHelper(t, "hold", pathEnv(path), noFlockEnv(false))
	le := mustLocked(t, path, Options{})
	if le.Owner == nil || le.Owner.PID != h.pid() {
		t.Fatalf("LockedError = %+v, want owner pid %d", le, h.pid())
	}
	if le.Self || le.Stale || le.Owner.Command != "helper" || le.Owner.Mode != "write" {
		t.Errorf("LockedError = %+v, owner %+v; want a live holder", le, le.Owner)
	}
	if want := fmt.Sprintf("locked by pid %d (helper", h.pid()); !strings.Contains(le.Error(), want) {
		t.Errorf("Error() = %q, want it to contain %q", le.Error(), want)
	}
	h.stop(t)
	mustAcquire(t, path, Options{}).Close()
}

func TestKilledHolderReleases(t *testing.T) {
	t.Parallel()
	path := lockPath(t)
	h := startHelper(t, "hold", pathEnv(path), noFlockEnv(false))
	before := inode(t, path)
	h.kill(t)
	// The dead holder's record is left; it is only history.
	st, err := Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Locked || !st.Stale || st.Owner == nil || st.Owner.PID != h.pid() {
		t.Errorf("Inspect after SIGKILL = %+v, want unlocked with the dead holder's stale record", st)
	}
	// Free at once: an Acquire that does not wait gets it.
	l := mustAcquire(t, path, Options{})
	if got := l.Owner().PID; got != os.Getpid() {
		t.Errorf("Owner().PID = %d, want %d", got, os.Getpid())
	}
	if !os.SameFile(before, inode(t, path)) {
		t.Error("the lock file was replaced")
	}
}

// TestMutualExclusion runs two processes that each take and release the
// lock many times; an O_EXCL marker file shows that they never hold it at
// the same time.
func TestMutualExclusion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		a, b   bool // NoFlock of the two processes
		cycles int
	}{
		{"flock", false, false, 1000},
		// Fewer cycles for the rarer modes.
		{"fallback", true, true, 300},
		{"mixed", false, true, 300},
	}
	// The full counts run in make crash (CI); every go test runs 100.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cycles := tt.cycles
			if testing.Short() || !testenv.Stress() {
				cycles = 100
			}
			path := lockPath(t)
			marker := filepath.Join(filepath.Dir(filepath.Dir(path)), "holder")
			var wg sync.WaitGroup
			outs := make([]string, 2)
			errs := make([]error, 2)
			for i, noFlock := range []bool{tt.a, tt.b} {
				cmd := helperCmd(t, "loop", pathEnv(path), noFlockEnv(noFlock),
					envMarker+"="+marker, fmt.Sprintf("%s=%d", envCycles, cycles))
				wg.Go(func() {
					out, err := cmd.Output()
					outs[i], errs[i] = strings.TrimSpace(string(out)), err
				})
			}
			wg.Wait()
			for i := range 2 {
				if errs[i] != nil {
					t.Errorf("process %d: %v (output %q)", i, errs[i], outs[i])
				}
			}
			t.Logf("%d cycles each; %s / %s", cycles, outs[0], outs[1])
		})
	}
}
