package replica_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/replica"
)

// checkBucket fails when an object of the remote is partial: every data
// object must hold the bytes its name (their sha256) says, and every
// manifest must parse and name only data objects that exist intact.
func checkBucket(t testing.TB, be *backend, remote string) {
	t.Helper()
	objects := map[string]bool{}
	for _, k := range be.keys(t, remote, "") {
		objects[k] = true
	}
	for key := range objects {
		switch {
		case strings.HasPrefix(key, "d/"):
			h := sha256.Sum256(be.get(t, remote, key))
			if "d/"+hex.EncodeToString(h[:]) != key {
				t.Errorf("data object %s is partial or altered", key)
			}
		case strings.HasPrefix(key, "m/"):
			var m replica.Manifest
			if err := json.Unmarshal(be.get(t, remote, key), &m); err != nil {
				t.Errorf("manifest %s does not parse: %v", key, err)
				continue
			}
			for _, s := range m.Segments {
				if s.Data != nil {
					continue // inline: its bytes are in the manifest
				}
				if !objects[s.Object] {
					t.Errorf("manifest %s names %s, which is missing", key, s.Object)
				}
			}
		}
	}
}

// Requests that fail or stall (a proxy in front of the real server drops
// or stalls connections, or cuts them in the middle of an upload) fail the
// push; nothing partial is left in the bucket, and once the network heals
// a push and a pull on another machine bring every entry across, after
// which a sync moves nothing.
func TestFaultyNetwork(t *testing.T) {
	srv := testenv.MinIO(t)
	be := s3be(srv)
	for _, mode := range []string{"drop", "stall", "cut"} {
		t.Run(mode, func(t *testing.T) {
			remote := remoteFor(t, be)
			p := newFaultProxy(t, srv.Addr)
			a, b := newMachine(t, be, remote), newMachine(t, be, remote)
			conf := s3conf(srv)
			conf.Endpoint, conf.RequestTimeout, conf.MaxRetries = p.URL(), time.Second, 1
			a.opts.Backends = s3Backends(conf)
			pa := a.newSession(t, "/f/"+mode, 40)
			a.run(t, "push")
			appendTo(t, pa, "more", 40)
			p.cutAt.Store(p.up.Load() + 6000)
			p.set(mode)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rep, err := a.remote(t).Push(ctx)
			if err == nil && rep.Sessions[0].Err == nil {
				t.Fatalf("push through a %s proxy succeeded: %+v", mode, rep.Sessions)
			}
			checkBucket(t, be, remote)
			p.set("pass")
			a.run(t, "push")
			checkBucket(t, be, remote)
			b.run(t, "pull")
			want, _ := entries(t, pa)
			got, _ := entries(t, sessionFiles(t, b.agentDir)[filepath.Base(pa)])
			if len(got) != len(want) {
				t.Errorf("b has %d entries, a %d", len(got), len(want))
			}
			for _, m := range []*machine{a, b} {
				m.run(t, "sync")
				if rep := m.run(t, "sync"); moved(rep) != 0 {
					t.Errorf("a further sync moved %d bytes", moved(rep))
				}
			}
		})
	}
}

// The server is killed in the middle of an upload and started again: the
// push fails, nothing partial is visible, the next push completes. (The
// directory remote's "server" is a Client wrapper that fails every call
// once the push has uploaded as much.)
func TestServerKilledMidUpload(t *testing.T) {
	t.Run("dir", func(t *testing.T) {
		be := &backend{}
		remote := remoteFor(t, be)
		a := newMachine(t, be, remote)
		fc := newFaultClient(t, remote)
		fc.budget.Store(200_000) // well inside the uploads
		a.opts.Client = fc
		testServerKilledMidUpload(t, be, remote, a, fc.heal)
	})
	t.Run("s3", func(t *testing.T) {
		srv := testenv.NewMinIO(t)
		be := s3be(srv)
		remote := remoteFor(t, be)
		p := newFaultProxy(t, srv.Addr)
		a := newMachine(t, be, remote)
		conf := s3conf(srv)
		conf.Endpoint, conf.RequestTimeout, conf.MaxRetries = p.URL(), 2*time.Second, 1
		a.opts.Backends = s3Backends(conf)
		p.hookAt.Store(p.up.Load() + 200_000) // well inside the uploads
		p.hook = func() { srv.Kill() }
		testServerKilledMidUpload(t, be, remote, a, func() {
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
		})
	})
}

func testServerKilledMidUpload(t *testing.T, be *backend, remote string, a *machine, restart func()) {
	b := newMachine(t, be, remote)
	var paths []string
	for i := range 4 {
		paths = append(paths, a.newSession(t, "/k/"+string(rune('a'+i)), 300))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := a.remote(t).Push(ctx)
	failed := err != nil
	if rep != nil {
		for _, s := range rep.Sessions {
			failed = failed || s.Err != nil
		}
	}
	if !failed {
		t.Fatal("push succeeded although the server was killed during it")
	}
	restart()
	checkBucket(t, be, remote)
	a.run(t, "push")
	checkBucket(t, be, remote)
	b.run(t, "pull")
	for _, pa := range paths {
		want, _ := entries(t, pa)
		got, _ := entries(t, sessionFiles(t, b.agentDir)[filepath.Base(pa)])
		if len(got) != len(want) {
			t.Errorf("%s: b has %d entries, a %d", filepath.Base(pa), len(got), len(want))
		}
	}
	for _, m := range []*machine{a, b} {
		m.run(t, "sync")
		if rep := m.run(t, "sync"); moved(rep) != 0 {
			t.Errorf("a further sync moved %d bytes", moved(rep))
		}
	}
}

// A bucket holding a foreign object (ignored, reported), a torn newest
// manifest (an older one is used, and the next push publishes above it)
// or a torn segment (never merged; a sync from a machine holding the lines
// rebuilds the remote copy).
func TestTornAndForeignObjects(t *testing.T) { eachBackend(t, testTornAndForeignObjects) }

func testTornAndForeignObjects(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	ctx := context.Background()
	put := func(key, body string) {
		t.Helper()
		be.put(t, remote, key, []byte(body))
	}
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	a.opts.InlineMax = -1 // segments in data objects, to tear one
	pa := a.newSession(t, "/t/one", 3)
	pb2 := a.newSession(t, "/t/two", 3)
	a.run(t, "push")
	appendTo(t, pa, "second", 2)
	a.run(t, "push")

	put("m/pi/notes.txt", "hello")                                    // foreign
	put("m/pi/"+filepath.Base(pa)+"/0000000009", `{"format":"sessct`) // torn manifest, newest
	rep := b.run(t, "pull")
	if len(rep.Warnings) == 0 {
		t.Error("the foreign object was not reported")
	}
	want, _ := entries(t, pa)
	got, _ := entries(t, sessionFiles(t, b.agentDir)[filepath.Base(pa)])
	if len(got) != len(want) {
		t.Fatalf("b pulled %d entries past a torn manifest, want %d", len(got), len(want))
	}
	// A torn segment: cut the data object of the second session.
	var seg string
	for _, k := range be.keys(t, remote, "m/pi/"+filepath.Base(pb2)+"/") {
		var m replica.Manifest
		json.Unmarshal(be.get(t, remote, k), &m)
		seg = m.Segments[0].Object
	}
	put(seg, "torn")
	appendTo(t, pb2, "after tear", 1)
	fresh := newMachine(t, be, remote)
	r := fresh.remote(t)
	rep, err := r.Pull(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, s := range rep.Sessions {
		if s.Err != nil {
			bad++
		}
	}
	if bad != 1 || len(sessionFiles(t, fresh.agentDir)) != 1 {
		t.Fatalf("pull past a torn segment: %d failed, %d restored; want 1 and 1", bad, len(sessionFiles(t, fresh.agentDir)))
	}
	a.opts.Verify = true
	if rep := a.run(t, "sync"); !rep.Sessions[1].Healed && !rep.Sessions[0].Healed {
		t.Fatalf("sync --verify did not rebuild the torn copy: %+v", rep.Sessions)
	}
	a.opts.Verify = false
	for _, m := range []*machine{fresh, b, a, fresh, b} {
		m.run(t, "sync")
	}
	for _, p := range []string{pa, pb2} {
		want, _ := entries(t, p)
		for _, m := range []*machine{b, fresh} {
			got, _ := entries(t, sessionFiles(t, m.agentDir)[filepath.Base(p)])
			if len(got) != len(want) {
				t.Errorf("%s: %d entries on a machine, want %d", filepath.Base(p), len(got), len(want))
			}
		}
	}
	for _, m := range []*machine{a, b, fresh} {
		if rep := m.run(t, "sync"); moved(rep) != 0 {
			t.Errorf("a further sync moved %d bytes", moved(rep))
		}
	}
}
