package replica_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
)

// A session pushed from one machine is restored on another in pi's
// directory for its cwd, byte for byte, and continues there; a second
// sync on either side moves nothing.
func TestPushPullRoundTrip(t *testing.T) { eachBackend(t, testPushPullRoundTrip) }

func testPushPullRoundTrip(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	path := a.newSession(t, "/home/dev/proj", 3)

	rep := a.run(t, "push")
	if rep.Uploaded == 0 || rep.Sessions[0].State != "pushed" {
		t.Fatalf("push: %+v", rep.Sessions)
	}
	b.run(t, "pull")
	got := sessionFiles(t, b.agentDir)
	want := filepath.Join(b.agentDir, "sessions", "--home-dev-proj--", filepath.Base(path))
	if got[filepath.Base(path)] != want {
		t.Fatalf("pull restored %v, want %s", got, want)
	}
	da, _ := os.ReadFile(path)
	db, _ := os.ReadFile(want)
	if diff := cmp.Diff(string(da), string(db)); diff != "" {
		t.Fatalf("restored bytes differ (-a +b):\n%s", diff)
	}
	// The restored session continues on b.
	s, err := engine.OpenFile(context.Background(), want, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendSessionInfo("continued on b"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, m := range []*machine{a, b} {
		for _, op := range []string{"push", "pull"} {
			m.run(t, op)
		}
	}
	a.run(t, "pull")
	for _, m := range []*machine{a, b} {
		for _, op := range []string{"sync", "status"} {
			if rep := m.run(t, op); moved(rep) != 0 || rep.Sessions[0].State != "in sync" {
				t.Errorf("second %s moved %d bytes: %+v", op, moved(rep), rep.Sessions)
			}
		}
	}
	ea, _ := entries(t, path)
	eb, _ := entries(t, want)
	if diff := cmp.Diff(ea, eb); diff != "" {
		t.Errorf("entries differ after a full sync (-a +b):\n%s", diff)
	}
}
