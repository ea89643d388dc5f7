package replica_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine/agentuse"
)

// readTree returns every file below dir (but the lock and its owner
// record) by relative path.
func readTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if filepath.Base(rel) == "session.lock" || filepath.Ext(rel) == ".owner" {
			return nil
		}
		data, _ := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	return out
}

// AgentUse session directories replicate file by file: a pull restores
// them byte for byte, files added on either side reach the other, and a
// further sync moves nothing.
func TestAgentUseRoundTrip(t *testing.T) { eachBackend(t, testAgentUseRoundTrip) }

// auMachine is a machine that syncs only AgentUse sessions, from a data
// directory of its own.
func auMachine(t *testing.T, be *backend, remote string) *machine {
	t.Helper()
	m := newMachine(t, be, remote)
	m.opts.AgentDir = ""
	m.opts.AgentUseDir = filepath.Join(filepath.Dir(m.agentDir), "data")
	return m
}

// auSession writes an AgentUse session of one message and one text part
// into m's project 0123456789abcdef, and returns its directory.
func auSession(t *testing.T, m *machine) string {
	t.Helper()
	ctx := context.Background()
	root := filepath.Join(m.opts.AgentUseDir, "agentuse", "project", "0123456789abcdef", "session")
	st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.Create(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "coder", Name: "coder"}, Model: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mid, err := w.AddMessage(agentuse.MessageSpec{Task: "fix it", ModelID: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddPart(mid, agentuse.TextPart("hello", w.Now())); err != nil {
		t.Fatal(err)
	}
	return w.Dir()
}

func testAgentUseRoundTrip(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a, b := auMachine(t, be, remote), auMachine(t, be, remote)
	ctx := context.Background()
	dirA := auSession(t, a)
	a.run(t, "sync")
	b.run(t, "sync")
	dirB := filepath.Join(b.opts.AgentUseDir, "agentuse", "project", "0123456789abcdef", "session", filepath.Base(dirA))
	if diff := cmp.Diff(readTree(t, dirA), readTree(t, dirB)); diff != "" {
		t.Fatalf("restored directory differs (-a +b):\n%s", diff)
	}
	// b continues the session; a gets the new message.
	sb, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: filepath.Dir(dirB)})
	if err != nil {
		t.Fatal(err)
	}
	wb, err := sb.Open(ctx, dirB)
	if err != nil {
		t.Fatal(err)
	}
	mid2, err := wb.AddMessage(agentuse.MessageSpec{Task: "more", ModelID: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wb.AddPart(mid2, agentuse.TextPart("on b", wb.Now())); err != nil {
		t.Fatal(err)
	}
	wb.Close()
	b.run(t, "sync")
	a.run(t, "sync")
	if diff := cmp.Diff(readTree(t, dirA), readTree(t, dirB)); diff != "" {
		t.Fatalf("directories differ after syncing b's message (-a +b):\n%s", diff)
	}
	for _, m := range []*machine{a, b} {
		if rep := m.run(t, "sync"); moved(rep) != 0 {
			t.Errorf("a further sync moved %d bytes", moved(rep))
		}
	}
}

// A file both machines changed is a conflict: the local version stays,
// the remote one is written beside it, and the report names that copy.
func TestAgentUseConflictNamesTheCopy(t *testing.T) { eachBackend(t, testAgentUseConflictNamesTheCopy) }

func testAgentUseConflictNamesTheCopy(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a, b := auMachine(t, be, remote), auMachine(t, be, remote)
	ctx := context.Background()
	root := filepath.Join(a.opts.AgentUseDir, "agentuse", "project", "0123456789abcdef", "session")
	st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.Create(ctx, agentuse.SessionSpec{Agent: agentuse.Agent{ID: "coder", Name: "coder"}, Model: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	dirA := w.Dir()
	w.Close()
	a.run(t, "sync")
	b.run(t, "sync")
	dirB := filepath.Join(b.opts.AgentUseDir, "agentuse", "project", "0123456789abcdef", "session", filepath.Base(dirA))
	// Both change session.json.
	for _, x := range []struct{ dir, v string }{{dirA, "a"}, {dirB, "b"}} {
		p := filepath.Join(x.dir, "session.json")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, append(data, []byte(" "+x.v)...), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a.run(t, "sync")
	rep := b.run(t, "sync")
	cs := rep.Sessions[0].Conflicts
	if len(cs) != 1 || cs[0].ID != "session.json" || len(cs[0].Copies) != 1 {
		t.Fatalf("conflicts: %+v", cs)
	}
	data, err := os.ReadFile(filepath.Join(dirB, filepath.FromSlash(cs[0].Copies[0])))
	if err != nil || !strings.HasSuffix(string(data), " a") {
		t.Errorf("the copy the report names: %q, %v", data, err)
	}
}
