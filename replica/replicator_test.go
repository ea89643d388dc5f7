package replica_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/replica"
)

// A session written with a Replicator reaches the remote without any
// push: another machine pulls every acknowledged entry after Close.
func TestReplicatorShipsAppends(t *testing.T) { eachBackend(t, testReplicatorShipsAppends) }

func testReplicatorShipsAppends(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	x := replica.NewReplicator(a.remote(t), replica.ReplicatorOptions{})
	s, err := openStore(t, engine.StoreOptions{AgentDir: a.agentDir, Replicator: x}).Create(context.Background(), "/r/p", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		appendPairs(t, s, "burst", 3)
	}
	path := s.SessionFile()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	b.run(t, "pull")
	got, _ := entries(t, sessionFiles(t, b.agentDir)[filepath.Base(path)])
	want, _ := entries(t, path)
	if len(got) != len(want) || len(want) != 30 {
		t.Fatalf("pulled %d entries, the session has %d (want 30)", len(got), len(want))
	}
	for id, l := range want {
		if got[id] != l {
			t.Errorf("entry %s not pulled intact", id)
		}
	}
}

// While the server is down appends go on; the replicator catches up when
// it is back, and nothing acknowledged is missing. (A directory remote is
// "down" through a Client wrapper that fails every call.)
func TestReplicatorSurvivesServerDown(t *testing.T) {
	t.Run("dir", func(t *testing.T) {
		be := &backend{}
		remote := remoteFor(t, be)
		a := newMachine(t, be, remote)
		fc := newFaultClient(t, remote)
		a.opts.Client = fc
		testReplicatorSurvivesServerDown(t, be, remote, a, func() { fc.down.Store(true) }, fc.heal)
	})
	t.Run("s3", func(t *testing.T) {
		srv := testenv.NewMinIO(t)
		be := s3be(srv)
		remote := remoteFor(t, be)
		a := newMachine(t, be, remote)
		conf := s3conf(srv)
		conf.RequestTimeout, conf.MaxRetries = 2*time.Second, 1
		a.opts.Backends = s3Backends(conf)
		testReplicatorSurvivesServerDown(t, be, remote, a, srv.Kill, func() {
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
		})
	})
}

func testReplicatorSurvivesServerDown(t *testing.T, be *backend, remote string, a *machine, down, up func()) {
	b := newMachine(t, be, remote)
	x := replica.NewReplicator(a.remote(t), replica.ReplicatorOptions{CloseTimeout: 300 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	s, err := openStore(t, engine.StoreOptions{AgentDir: a.agentDir, Replicator: x, Sync: engine.SyncNone}).Create(context.Background(), "/r/down", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	appendPairs(t, s, "before", 2)
	if err := x.Flush(ctxTimeout(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	down()
	appendPairs(t, s, "while down", 5) // never waits for the network
	path := s.SessionFile()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	up()
	if err := x.Flush(ctxTimeout(t, 2*time.Minute)); err != nil {
		t.Fatalf("flush after the server came back: %v", err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	b.run(t, "pull")
	got, _ := entries(t, sessionFiles(t, b.agentDir)[filepath.Base(path)])
	want, _ := entries(t, path)
	for id := range want {
		if _, ok := got[id]; !ok {
			t.Errorf("entry %s was not replicated", id)
		}
	}
	if len(want) != 14 {
		t.Errorf("the session has %d entries, want 14", len(want))
	}
	// And a full sync afterwards moves nothing.
	a.run(t, "sync")
	if rep := a.run(t, "sync"); moved(rep) != 0 {
		t.Errorf("a further sync moved %d bytes", moved(rep))
	}
}

func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
