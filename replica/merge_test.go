package replica_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/replica"
)

// Two machines append to the same session while partitioned and then
// sync, in either order: afterwards each holds every entry of both, each
// line's bytes unchanged, parents before children, each keeps its own
// leaf (the other's tip gets a label), and another round moves nothing.
func TestPartitionedAppendsMerge(t *testing.T) { eachBackend(t, testPartitionedAppendsMerge) }

func testPartitionedAppendsMerge(t *testing.T, be *backend) {
	for _, order := range []string{"a-first", "b-first"} {
		t.Run(order, func(t *testing.T) {
			remote := remoteFor(t, be)
			a, b := newMachine(t, be, remote), newMachine(t, be, remote)
			pa := a.newSession(t, "/work/p", 2)
			a.run(t, "sync")
			b.run(t, "sync")
			pb := sessionFiles(t, b.agentDir)[filepath.Base(pa)]

			// Partitioned: both append.
			idsA := appendTo(t, pa, "a", 3)
			idsB := appendTo(t, pb, "b", 2)
			before := map[string]map[string]string{}
			before["a"], _ = entries(t, pa)
			before["b"], _ = entries(t, pb)

			first, second := a, b
			if order == "b-first" {
				first, second = b, a
			}
			for range 2 {
				first.run(t, "sync")
				second.run(t, "sync")
			}
			ea, ha := entries(t, pa)
			eb, hb := entries(t, pb)
			if ha != hb {
				t.Errorf("headers differ:\n%s\n%s", ha, hb)
			}
			for who, es := range before {
				for id, line := range es {
					if ea[id] != line || eb[id] != line {
						t.Errorf("%s's entry %s is missing or changed after the merge", who, id)
					}
				}
			}
			// Both hold the same entries but for the markers each keeps.
			strip := func(m map[string]string) map[string]string {
				out := map[string]string{}
				for id, l := range m {
					if !strings.Contains(l, `"label":"sessctl sync: remote tip"`) {
						out[id] = l
					}
				}
				return out
			}
			if diff := cmp.Diff(strip(ea), strip(eb)); diff != "" {
				t.Errorf("the machines hold different entries (-a +b):\n%s", diff)
			}
			checkParentsFirst(t, pa)
			checkParentsFirst(t, pb)
			// Each machine's leaf is on its own branch.
			for _, c := range []struct {
				path string
				own  string
			}{{pa, idsA[len(idsA)-1]}, {pb, idsB[len(idsB)-1]}} {
				s, err := engine.OpenFile(context.Background(), c.path, engine.OpenOptions{ReadOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				leaf, _ := s.LeafID()
				found := false
				for _, e := range s.BranchPath(leaf) {
					found = found || e.ID == c.own
				}
				if !found {
					t.Errorf("%s: the leaf %s is not on the local branch ending in %s", c.path, leaf, c.own)
				}
				s.Close()
			}
			for _, m := range []*machine{a, b} {
				if rep := m.run(t, "sync"); moved(rep) != 0 {
					t.Errorf("a further sync moved %d bytes", moved(rep))
				}
			}
		})
	}
}

// The same id with different bytes on two machines is a conflict: both
// versions are kept on both machines under derived ids and reported; a
// second round moves nothing.
func TestConflictKeepsBoth(t *testing.T) { eachBackend(t, testConflictKeepsBoth) }

func testConflictKeepsBoth(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	pa := a.newSession(t, "/work/c", 1)
	a.run(t, "sync")
	b.run(t, "sync")
	pb := sessionFiles(t, b.agentDir)[filepath.Base(pa)]
	// Both machines write an entry with the same id and other bytes.
	entry := `{"type":"custom","customType":"note","data":{"v":%q},"id":"c0ffee00","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z"}`
	for _, x := range []struct{ path, v string }{{pa, "from a"}, {pb, "from b"}} {
		f, err := os.OpenFile(x.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, entry+"\n", x.v)
		f.Close()
	}
	a.run(t, "sync")
	rep := b.run(t, "sync")
	if len(rep.Sessions[0].Conflicts) != 1 || rep.Sessions[0].Conflicts[0].ID != "c0ffee00" {
		t.Fatalf("conflicts reported: %+v", rep.Sessions[0].Conflicts)
	}
	a.run(t, "sync")
	for _, p := range []string{pa, pb} {
		es, _ := entries(t, p)
		n := 0
		for _, l := range es {
			if strings.Contains(l, `"from a"`) || strings.Contains(l, `"from b"`) {
				n++
			}
		}
		// c0ffee00 (the local version) plus a copy of each version.
		if n != 3 {
			t.Errorf("%s holds %d versions of the conflicting entry, want 3", p, n)
		}
	}
	for _, m := range []*machine{a, b} {
		if rep := m.run(t, "sync"); moved(rep) != 0 {
			t.Errorf("a further sync moved %d bytes", moved(rep))
		}
	}
}

// --cwd-map restores a session of another machine's path under the local
// one: pi's directory for it and the header's cwd.
func TestPullCwdMap(t *testing.T) { eachBackend(t, testPullCwdMap) }

func testPullCwdMap(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	pa := a.newSession(t, "/Users/ann/src/app", 1)
	a.run(t, "push")
	b.opts.CwdMap = []replica.CwdMapping{{Old: "/Users/ann", New: "/home/bob"}}
	b.run(t, "pull")
	want := filepath.Join(b.agentDir, "sessions", "--home-bob-src-app--", filepath.Base(pa))
	_, h := entries(t, want)
	if !strings.Contains(h, `"cwd":"/home/bob/src/app"`) {
		t.Errorf("restored header: %s", h)
	}
	if rep := b.run(t, "sync"); moved(rep) != 0 {
		t.Errorf("a further sync moved %d bytes", moved(rep))
	}
}
