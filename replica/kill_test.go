package replica_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/replica"
	"github.com/sessctl/sessctl/replica/s3"
)

// syncJob is what the syncer child is told to do.
type syncJob struct {
	Op, Remote, AgentDir, StateDir string
}

// syncer is the child the kill test starts: one push, pull or sync, with
// an S3 remote's server from the AWS_* variables.
func syncer() int {
	var j syncJob
	if err := json.Unmarshal([]byte(os.Getenv("SESSCTL_TEST_SYNC")), &j); err != nil {
		return 2
	}
	r, err := replica.Open(replica.Options{Remote: j.Remote, Backends: s3Backends(s3.EnvConfig(os.LookupEnv)), AgentDir: j.AgentDir, StateDir: j.StateDir})
	if err != nil {
		return 1
	}
	ctx := context.Background()
	switch j.Op {
	case "push":
		_, err = r.Push(ctx)
	case "pull":
		_, err = r.Pull(ctx)
	default:
		_, err = r.Sync(ctx)
	}
	if err != nil {
		return 1
	}
	return 0
}

// kills is how many syncs the kill test kills: SESSCTL_SYNC_KILLS (make
// crash sets 50), else 5.
func kills(t *testing.T) int {
	if s := os.Getenv("SESSCTL_SYNC_KILLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("SESSCTL_SYNC_KILLS=%q", s)
		}
		return n
	}
	return 5
}

// Syncs killed with SIGKILL at random points, on two machines that keep
// appending to the same sessions: no remote object is ever partial, and
// after a full sync both ways every acknowledged entry is on both
// machines and a further sync moves nothing.
func TestKillDuringSync(t *testing.T) { eachBackend(t, testKillDuringSync) }

func testKillDuringSync(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	var names []string
	for i := range 3 {
		names = append(names, filepath.Base(a.newSession(t, "/kill/"+strconv.Itoa(i), 5)))
	}
	a.run(t, "sync")
	b.run(t, "sync")
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SESSCTL_SYNC_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	acked := map[string]map[string]bool{} // session -> entry ids appended anywhere
	for _, n := range names {
		acked[n] = map[string]bool{}
	}
	n := kills(t)
	killed := 0
	for i := range n {
		for _, m := range []*machine{a, b} {
			name := names[rng.IntN(len(names))]
			path := sessionFiles(t, m.agentDir)[name]
			for _, id := range appendTo(t, path, "k"+strconv.Itoa(i), 1+rng.IntN(3)) {
				acked[name][id] = true
			}
		}
		m := []*machine{a, b}[rng.IntN(2)]
		job, _ := json.Marshal(syncJob{Op: []string{"push", "pull", "sync"}[rng.IntN(3)], Remote: remote, AgentDir: m.agentDir, StateDir: m.opts.StateDir})
		cmd := testenv.Command("syncer")
		if be.s3() {
			cmd.Env = append(cmd.Env, be.srv.Env()...)
		}
		cmd.Env = append(cmd.Env, "SESSCTL_TEST_SYNC="+string(job))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
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
	t.Logf("%d syncs, %d killed before they finished", n, killed)
	for range 2 {
		a.run(t, "sync")
		b.run(t, "sync")
	}
	for name, ids := range acked {
		for mi, m := range []*machine{a, b} {
			path := sessionFiles(t, m.agentDir)[name]
			es, _ := entries(t, path)
			for id := range ids {
				if _, ok := es[id]; !ok {
					t.Errorf("%s: acknowledged entry %s is missing on machine %d", name, id, mi)
				}
			}
			checkParentsFirst(t, path)
		}
	}
	for _, m := range []*machine{a, b} {
		if rep := m.run(t, "sync"); moved(rep) != 0 {
			t.Errorf("a further sync moved %d bytes", moved(rep))
		}
	}
}
