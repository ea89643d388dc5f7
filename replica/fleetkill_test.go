package replica_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/replica"
	"github.com/sessctl/sessctl/replica/s3"
)

// compactJob is what the compacter child is told to do: append a pair
// to the session and push, Rounds times, with segments small enough
// that most pushes compact.
type compactJob struct {
	Remote, AgentDir, StateDir, Path string
	Rounds                           int
}

// compactOpts are the options of the compaction kill tests: 4 KiB
// segments, no inline ones, so that every fourth push or so merges
// segments.
func compactOpts(o *replica.Options) {
	o.SegmentSize, o.InlineMax = 4096, -1
}

// compacter is the child TestKillDuringCompaction kills.
func compacter() int {
	var j compactJob
	if err := json.Unmarshal([]byte(os.Getenv("SESSCTL_TEST_COMPACT")), &j); err != nil {
		return 2
	}
	o := replica.Options{Remote: j.Remote, Backends: s3Backends(s3.EnvConfig(os.LookupEnv)), AgentDir: j.AgentDir, StateDir: j.StateDir}
	compactOpts(&o)
	r, err := replica.Open(o)
	if err != nil {
		return 1
	}
	ctx := context.Background()
	st, err := engine.OpenStore(ctx, engine.StoreOptions{AgentDir: j.AgentDir, Sync: engine.SyncNone})
	if err != nil {
		return 1
	}
	for i := range j.Rounds {
		s, err := st.Open(ctx, j.Path, engine.OpenOptions{Wait: true})
		if err != nil {
			return 1
		}
		for _, m := range []string{
			fmt.Sprintf(`{"role":"user","content":"kill round %d %d","timestamp":1}`, os.Getpid(), i),
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"answer %d"}],"provider":"p","model":"m","stopReason":"stop","timestamp":2}`, i),
		} {
			if _, err := s.AppendMessage(rawMessage(m)); err != nil {
				return 1
			}
		}
		s.Close()
		if _, err := r.Push(ctx); err != nil {
			return 1
		}
	}
	return 0
}

// compactKills is how many compacting pushes the kill test kills:
// SESSCTL_COMPACT_KILLS (make crash sets 50), else 5.
func compactKills(t *testing.T) int {
	if s := os.Getenv("SESSCTL_COMPACT_KILLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("SESSCTL_COMPACT_KILLS=%q", s)
		}
		return n
	}
	return 5
}

// Pushes that compact, killed with SIGKILL at random points: no
// manifest ever names an object that is missing, the pushes after them
// still compact, a collection (Prune) afterwards removes only what no
// manifest needs, and a pull from scratch holds every line the machine
// wrote.
func TestKillDuringCompaction(t *testing.T) { eachBackend(t, testKillDuringCompaction) }

func testKillDuringCompaction(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	compactOpts(&a.opts)
	path := a.newSession(t, "/kill/compact", 2)
	a.run(t, "push")
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SESSCTL_SYNC_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	n := compactKills(t)
	killed := 0
	for i := range n {
		job, _ := json.Marshal(compactJob{Remote: remote, AgentDir: a.agentDir, StateDir: a.opts.StateDir, Path: path, Rounds: 6})
		cmd := testenv.Command("compacter")
		if be.s3() {
			cmd.Env = append(cmd.Env, be.srv.Env()...)
		}
		cmd.Env = append(cmd.Env, "SESSCTL_TEST_COMPACT="+string(job))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		if cmd.Process.Kill() == nil {
			if err := cmd.Wait(); err != nil {
				killed++
			}
		}
		checkBucket(t, be, remote)
		if t.Failed() {
			t.Fatalf("after kill %d", i+1)
		}
	}
	t.Logf("%d compacting runs, %d killed before they finished", n, killed)
	a.run(t, "push")
	m := manifestOf(t, be, remote, filepath.Base(path))
	t.Logf("%d segments, %d bytes", len(m.Segments), m.Size)
	// The pushes after the kills compact again: sealed segments and at
	// most three of each of the four classes below.
	if limit := int(m.Size/2048) + 4*3; len(m.Segments) > limit {
		t.Errorf("%d segments for %d bytes after the kills; want at most %d", len(m.Segments), m.Size, limit)
	}
	later := a.opts
	later.Now = func() time.Time { return time.Now().Add(3 * time.Hour) }
	lr, err := replica.Open(later)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := lr.Prune(context.Background(), replica.PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prune collected %d objects", len(prep.Collected))
	checkBucket(t, be, remote)
	fresh := newMachine(t, be, remote)
	fresh.run(t, "pull")
	sameEntries(t, path, sessionFiles(t, fresh.agentDir)[filepath.Base(path)])
}

// The server killed while pushes compact (MinIO, SIGKILL, restarted on
// the same data): a push may fail, none leaves a manifest naming a
// missing object, and once the server is back every line arrives.
func TestServerKilledMidCompaction(t *testing.T) {
	srv := testenv.NewMinIO(t)
	be := s3be(srv)
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	compactOpts(&a.opts)
	conf := s3conf(srv)
	conf.MaxRetries, conf.RequestTimeout = 1, 2*time.Second
	a.opts.Backends = s3Backends(conf)
	path := a.newSession(t, "/kill/server", 2)
	a.run(t, "push")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	rounds := max(compactKills(t)/5, 3)
	failed := 0
	r := a.remote(t)
	for i := range rounds {
		// The server dies at a random moment while pushes go on.
		dead := make(chan struct{})
		go func(d time.Duration) {
			time.Sleep(d)
			srv.Kill()
			close(dead)
		}(time.Duration(100+rng.IntN(400)) * time.Millisecond)
		for k := 0; ; k++ {
			appendTo(t, path, fmt.Sprintf("srv%d-%d", i, k), 1)
			if _, err := r.Push(context.Background()); err != nil {
				failed++
				break
			}
		}
		<-dead
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		checkBucket(t, be, remote)
		if t.Failed() {
			t.Fatalf("after server kill %d", i+1)
		}
	}
	t.Logf("%d server kills, %d pushes failed", rounds, failed)
	a.run(t, "push")
	checkBucket(t, be, remote)
	fresh := newMachine(t, be, remote)
	fresh.run(t, "pull")
	sameEntries(t, path, sessionFiles(t, fresh.agentDir)[filepath.Base(path)])
}

// leaseJob is what the lease holder child is told.
type leaseJob struct {
	Remote, AgentDir, Path, Host, Ready string
	TTL                                 time.Duration
}

// leaseHolder is the child TestLeaseTakeoverAfterKill kills: it opens the
// session for writing with a lease, says so, and appends until killed.
func leaseHolder() int {
	var j leaseJob
	if err := json.Unmarshal([]byte(os.Getenv("SESSCTL_TEST_LEASE")), &j); err != nil {
		return 2
	}
	r, err := replica.Open(replica.Options{Remote: j.Remote, Backends: s3Backends(s3.EnvConfig(os.LookupEnv)), AgentDir: j.AgentDir, Host: j.Host})
	if err != nil {
		return 1
	}
	x := replica.NewReplicator(r, replica.ReplicatorOptions{Lease: true, LeaseTTL: j.TTL, Command: "holder", Interval: 100 * time.Millisecond})
	ctx := context.Background()
	st, err := engine.OpenStore(ctx, engine.StoreOptions{AgentDir: j.AgentDir, Replicator: x, Sync: engine.SyncNone})
	if err != nil {
		return 1
	}
	s, err := st.Open(ctx, j.Path, engine.OpenOptions{Wait: true})
	if err != nil {
		return 1
	}
	if err := os.WriteFile(j.Ready, []byte("ok"), 0o600); err != nil {
		return 1
	}
	for i := 0; ; i++ {
		if _, err := s.AppendMessage(rawMessage(fmt.Sprintf(`{"role":"user","content":"held %d","timestamp":1}`, i))); err != nil {
			return 1
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// leaseRounds is how many takeovers the lease kill test makes:
// SESSCTL_LEASE_ROUNDS (make crash sets 5), else 1.
func leaseRounds(t *testing.T) int {
	if s := os.Getenv("SESSCTL_LEASE_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("SESSCTL_LEASE_ROUNDS=%q", s)
		}
		return n
	}
	return 1
}

// Two machines (two agent directories, two host names) and one session:
// while the first writes it (a child process holding the lease), the
// second's open is refused naming the first's host and pid; the second
// waits (OpenOptions.Wait), the first is killed with SIGKILL, and the
// second takes the lease over once it expired. Nothing the first wrote
// is lost: its next push ships it. The time from the kill to the
// takeover is logged (make crash; BENCHMARKS.md), never asserted.
func TestLeaseTakeoverAfterKill(t *testing.T) { eachBackend(t, testLeaseTakeoverAfterKill) }

func testLeaseTakeoverAfterKill(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	ctx := context.Background()
	ttl := 2 * time.Second
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	a.opts.Host, b.opts.Host = "host-a", "host-b"
	path := a.newSession(t, "/lease/kill", 1)
	a.run(t, "push")
	b.run(t, "pull")
	bp := sessionFiles(t, b.agentDir)[filepath.Base(path)]
	var took []time.Duration
	for round := range leaseRounds(t) {
		ready := filepath.Join(t.TempDir(), "ready")
		job, _ := json.Marshal(leaseJob{Remote: remote, AgentDir: a.agentDir, Path: path, Host: a.opts.Host, Ready: ready, TTL: ttl})
		cmd := testenv.Command("leaseHolder")
		if be.s3() {
			cmd.Env = append(cmd.Env, be.srv.Env()...)
		}
		cmd.Env = append(cmd.Env, "SESSCTL_TEST_LEASE="+string(job))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := os.Stat(ready); err == nil {
				break
			}
			if cmd.ProcessState != nil {
				t.Fatal("the lease holder exited")
			}
			time.Sleep(10 * time.Millisecond)
		}
		xb := replica.NewReplicator(b.remote(t), replica.ReplicatorOptions{Lease: true, LeaseTTL: ttl, Command: "taker"})
		stb := openStore(t, engine.StoreOptions{AgentDir: b.agentDir, Replicator: xb, Sync: engine.SyncNone})
		_, err := stb.Open(ctx, bp, engine.OpenOptions{})
		var le *engine.LockedError
		if !errors.As(err, &le) || le.Owner == nil || le.Owner.Host != "host-a" || le.Owner.PID != cmd.Process.Pid || !strings.Contains(err.Error(), "host-a") {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: the second machine's open: %v; want ErrLocked naming pid %d on host-a", round, err, cmd.Process.Pid)
		}
		got := make(chan error, 1)
		var sb *engine.Session
		wctx, cancel := context.WithTimeout(ctx, 30*ttl)
		go func() {
			var err error
			sb, err = stb.Open(wctx, bp, engine.OpenOptions{Wait: true})
			got <- err
		}()
		time.Sleep(ttl / 2)
		killed := time.Now()
		cmd.Process.Kill()
		cmd.Wait()
		err = <-got
		cancel()
		if err != nil {
			t.Fatalf("round %d: taking the lease over after the holder was killed: %v", round, err)
		}
		took = append(took, time.Since(killed))
		appendPairs(t, sb, "b"+strconv.Itoa(round), 1)
		if err := sb.Close(); err != nil {
			t.Fatal(err)
		}
		if err := xb.Close(); err != nil {
			t.Fatal(err)
		}
		// Machine a ships what its killed writer appended; b brings it in.
		a.run(t, "sync")
		b.run(t, "sync")
	}
	t.Logf("lease TTL %v: takeover %v after SIGKILL of the holder", ttl, took)
	a.run(t, "sync")
	fresh := newMachine(t, be, remote)
	fresh.run(t, "pull")
	got := sessionFiles(t, fresh.agentDir)[filepath.Base(path)]
	sameEntriesSubset(t, path, got)
	sameEntriesSubset(t, bp, got)
}

// sameEntriesSubset fails unless every entry line of a (but sync
// markers) is in b.
func sameEntriesSubset(t testing.TB, a, b string) {
	t.Helper()
	want, _ := entries(t, a)
	got, _ := entries(t, b)
	for id, l := range want {
		if strings.Contains(l, `"label":"sessctl sync: remote tip"`) {
			continue
		}
		if got[id] != l {
			t.Errorf("%s: entry %s of %s missing or altered", filepath.Base(b), id, a)
		}
	}
}
