package replica_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/replica"
)

// pi itself appending beside a looping sync, against the real MinIO, as
// the hostile run of issue 39 did (items 1 and 2). go test runs one short
// round; make crash runs SESSCTL_PI_SYNC_ROUNDS rounds at the hostile
// run's size (150 entries of 30 KB, one every 30 ms). The deterministic
// tests of the same races are in beside_test.go.

// piSyncRounds is how many rounds, and the size of each.
func piSyncRounds(t *testing.T) (rounds, entries, size, interval int) {
	rounds, entries, size, interval = 1, 40, 4<<10, 10
	if v := os.Getenv("SESSCTL_PI_SYNC_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SESSCTL_PI_SYNC_ROUNDS=%q: want a positive number", v)
		}
		rounds, entries, size, interval = n, 150, 30<<10, 30
	}
	return rounds, entries, size, interval
}

// piAppending is pi 1.x or 0.73 (the reference, testenv.Pi) appending
// to a session file in a process of its own.
type piAppending struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	mu     sync.Mutex
	ids    []string
	done   chan struct{}
}

// startPi starts pi appending entries tool results of size bytes to
// path, one every interval ms.
func startPi(t *testing.T, path string, entries, size, interval int) *piAppending {
	t.Helper()
	node, modules := testenv.Pi(t)
	p := &piAppending{done: make(chan struct{})}
	p.cmd = exec.Command(node, filepath.Join("..", "scripts", "pi-writer.mjs"), modules, path, "600", strconv.Itoa(entries), strconv.Itoa(size), strconv.Itoa(interval))
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.mu.Lock()
			p.ids = append(p.ids, sc.Text())
			p.mu.Unlock()
		}
	}()
	return p
}

// wait waits for pi to finish and returns the ids it wrote.
func (p *piAppending) wait(t *testing.T) []string {
	t.Helper()
	<-p.done
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("pi: %v\n%s", err, p.stderr.String())
	}
	return p.ids
}

// loop runs op on m until stop is closed, and once more after; a run
// that fails (a race lost eight times over) is tried again by the next.
func (m *machine) loop(t *testing.T, stop <-chan struct{}, ops ...string) (runs, failed int) {
	ctx := context.Background()
	for {
		for _, op := range ops {
			r, err := replica.Open(m.opts)
			if err != nil {
				t.Error(err)
				return
			}
			var rep *replica.Report
			switch op {
			case "push":
				rep, err = r.Push(ctx)
			case "pull":
				rep, err = r.Pull(ctx)
			case "sync":
				rep, err = r.Sync(ctx)
			}
			r.Close()
			runs++
			if err != nil {
				failed++
				continue
			}
			for _, s := range rep.Sessions {
				if s.Err != nil {
					failed++
				}
			}
		}
		select {
		case <-stop:
			return
		default:
		}
	}
}

// One machine: pi appends while push loops; after a final push, a fresh
// machine's pull holds every entry pi wrote, once.
func TestPiBesideSyncPush(t *testing.T) {
	srv := testenv.MinIO(t)
	be := s3be(srv)
	rounds, entries, size, interval := piSyncRounds(t)
	lost, twice := 0, 0
	for round := range rounds {
		remote := remoteFor(t, be)
		a := newMachine(t, be, remote)
		path := a.newSession(t, "/home/dev/p", 1)
		name := filepath.Base(path)
		first := keys(mustEntries(t, path))
		pi := startPi(t, path, entries, size, interval)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var runs, failed int
		wg.Go(func() { runs, failed = a.loop(t, stop, "push") })
		ids := pi.wait(t)
		close(stop)
		wg.Wait()
		a.run(t, "push")
		c := newMachine(t, be, remote)
		c.run(t, "pull")
		got := fileCount(t, sessionFiles(t, c.agentDir)[name])
		all := append(first, ids...)
		for _, id := range all {
			switch got[id] {
			case 0:
				lost++
			case 1:
			default:
				twice++
			}
		}
		if st := a.run(t, "status").Sessions[0].State; st != "in sync" {
			t.Errorf("round %d: status %q after the final push", round, st)
		}
		t.Logf("round %d: pi wrote %d entries; %d pushes beside it (%d failed); the fresh pull holds %d of %d entries", round, len(ids), runs, failed, len(got), len(all))
	}
	if lost > 0 || twice > 0 {
		t.Errorf("over %d rounds: %d entries missing on a fresh machine, %d more than once", rounds, lost, twice)
	}
}

// Two machines, pi appending on each while each loops pull and push;
// then a pull and a push on each side in turn: both machines and the
// remote hold the same entries, each once, parents before children.
func TestPiBesideSyncTwoMachines(t *testing.T) {
	srv := testenv.MinIO(t)
	be := s3be(srv)
	rounds, entries, size, interval := piSyncRounds(t)
	bad := 0
	for round := range rounds {
		remote := remoteFor(t, be)
		a, b := newMachine(t, be, remote), newMachine(t, be, remote)
		apath := a.newSession(t, "/home/dev/p", 1)
		name := filepath.Base(apath)
		a.run(t, "push")
		b.run(t, "pull")
		bpath := sessionFiles(t, b.agentDir)[name]
		first := keys(mustEntries(t, apath))
		pa := startPi(t, apath, entries, size, interval)
		pb := startPi(t, bpath, entries, size, interval)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var aRuns, bRuns int
		wg.Go(func() { aRuns, _ = a.loop(t, stop, "push", "pull") })
		wg.Go(func() { bRuns, _ = b.loop(t, stop, "pull", "push") })
		ids := append(pa.wait(t), pb.wait(t)...)
		close(stop)
		wg.Wait()
		for _, m := range []*machine{a, b, a, b} {
			for _, op := range []string{"pull", "push"} {
				for _, s := range m.run(t, op).Sessions {
					for _, r := range s.Refused {
						// A line whose parent is still on its way is merged
						// by a later pull; the counts below say whether.
						t.Logf("round %d: %s refused %v", round, op, r)
					}
				}
			}
		}
		all := append(first, ids...)
		c := newMachine(t, be, remote)
		c.run(t, "pull")
		cpath := sessionFiles(t, c.agentDir)[name]
		sides := []struct {
			what string
			got  map[string]int
		}{
			{"A", fileCount(t, apath)},
			{"B", fileCount(t, bpath)},
			{"the remote", remoteCount(t, a, name)},
			{"a fresh machine", fileCount(t, cpath)},
		}
		for _, side := range sides {
			if d := missingOrTwice(all, side.got); d != "" || len(side.got) != len(sides[0].got) {
				bad++
				t.Errorf("round %d: %s holds %d entries (A %d): %s", round, side.what, len(side.got), len(sides[0].got), d)
			}
		}
		checkParentsFirst(t, cpath)
		for _, m := range []*machine{a, b} {
			if st := m.run(t, "status").Sessions[0].State; st != "in sync" {
				t.Errorf("round %d: status %q after pull and push on each side", round, st)
			}
		}
		t.Logf("round %d: pi wrote %d entries on A and B; %d and %d runs beside it; every side holds %d entries", round, len(ids), aRuns, bRuns, len(sides[3].got))
	}
	if bad > 0 {
		t.Errorf("over %d rounds, %d sides differed", rounds, bad)
	}
}
