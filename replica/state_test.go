package replica_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/replica"
)

// states returns each session's state in the report by name.
func states(rep *replica.Report) map[string]string {
	out := map[string]string{}
	for _, s := range rep.Sessions {
		out[s.Kind+"/"+s.Name] = s.State
	}
	return out
}

// A pull of a session only the store has, and a push of one only the
// remote has, move nothing: they say so with the word status uses ("new
// local", "new remote"), for JSONL and AgentUse sessions alike.
func TestStateWordsOfOneSidedSessions(t *testing.T) {
	srv := testenv.MinIO(t)
	remote := remoteFor(t, srv)
	a, b, c := newMachine(t, srv, remote), newMachine(t, srv, remote), newMachine(t, srv, remote)
	a.newSession(t, "/words/a", 1)
	a.run(t, "push")
	b.newSession(t, "/words/b", 1)
	b.opts.AgentUseDir = filepath.Join(filepath.Dir(b.agentDir), "data")
	root := filepath.Join(b.opts.AgentUseDir, "agentuse", "project", "0123456789abcdef", "session")
	st, err := agentuse.OpenStore(context.Background(), agentuse.Options{SessionRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.Create(context.Background(), agentuse.SessionSpec{Agent: agentuse.Agent{ID: "coder", Name: "coder"}, Model: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	c.opts.AgentUseDir = filepath.Join(filepath.Dir(c.agentDir), "data")

	for _, x := range []struct {
		m    *machine
		op   string
		word string
	}{{b, "pull", "new local"}, {c, "push", "new remote"}} {
		if x.m == c {
			b.run(t, "push")
		}
		status := states(x.m.run(t, "status"))
		after := states(x.m.run(t, x.op))
		n := 0
		for id, s := range status {
			if s != x.word {
				continue
			}
			n++
			if after[id] != x.word {
				t.Errorf("%s: status says %q, %s says %q", id, s, x.op, after[id])
			}
		}
		if n == 0 {
			t.Errorf("status before %s: %v, want a session in state %q", x.op, status, x.word)
		}
	}
}
