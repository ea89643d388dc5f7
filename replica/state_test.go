package replica_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/sessctl/sessctl/engine/agentuse"
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
func TestStateWordsOfOneSidedSessions(t *testing.T) { eachBackend(t, testStateWordsOfOneSidedSessions) }

func testStateWordsOfOneSidedSessions(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a, b, c := newMachine(t, be, remote), newMachine(t, be, remote), newMachine(t, be, remote)
	a.newSession(t, "/words/a", 1)
	a.run(t, "push")
	b.newSession(t, "/words/b", 1)
	b.opts.AgentUseDir = filepath.Join(filepath.Dir(b.agentDir), "data")
	root := filepath.Join(b.opts.AgentUseDir, "agentuse", "project", "0123456789abcdef", "session")
	st, err := agentuse.OpenStore(context.Background(), agentuse.StoreOptions{Dir: root})
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

// deafProxy forwards requests to the server until the first request
// that matches. It forwards that one when forward is set, drops its
// reply (closing the connection), and from then on drops every request
// unheard: a request that reached the server (or not) whose answer was
// lost, and a network that stayed down.
type deafProxy struct {
	srv     *httptest.Server
	match   func(*http.Request) bool
	forward bool
	deaf    atomic.Bool
	fired   atomic.Bool // the matching request was answered 200 by the server
}

func newDeafProxy(t testing.TB, target string, forward bool, match func(*http.Request) bool) *deafProxy {
	t.Helper()
	p := &deafProxy{match: match, forward: forward}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: target})
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		drop := func() {
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
		}
		if p.deaf.Load() {
			drop()
			return
		}
		if !p.match(r) {
			rp.ServeHTTP(w, r)
			return
		}
		p.deaf.Store(true)
		if p.forward {
			rec := httptest.NewRecorder()
			rp.ServeHTTP(rec, r)
			p.fired.Store(rec.Code == http.StatusOK)
		}
		drop()
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// loseReply makes m's next upload of a manifest below m/<kind>/ lose its
// reply (the request reaching the store when forward), after which the
// store stays unreachable; the S3 remote's through a proxy, the directory
// remote's through a Client wrapper. It returns whether the request
// reached the store and succeeded, and the function that reconnects m.
func loseReply(t *testing.T, be *backend, m *machine, kind string, forward bool) (fired func() bool, reconnect func()) {
	if !be.s3() {
		fc := newFaultClient(t, m.opts.Remote)
		fc.loseReply(forward, func(op, key string) bool {
			return op == "PutIfAbsent" && strings.HasPrefix(key, "m/"+kind+"/")
		})
		m.opts.Client = fc
		return fc.fired.Load, func() { m.opts.Client = nil }
	}
	p := newDeafProxy(t, be.srv.Addr, forward, func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/m/"+kind+"/")
	})
	direct := m.opts.Backends
	conf := s3conf(be.srv)
	conf.Endpoint, conf.RequestTimeout, conf.MaxRetries = p.srv.URL, time.Second, 1
	m.opts.Backends = s3Backends(conf)
	return p.fired.Load, func() { m.opts.Backends = direct }
}

// A push sends its manifest and sees no reply. When the manifest reached
// the server, the next status recognises it as the one pushed (by its
// bytes, not its generation) and says "in sync"; when it did not, or
// another writer published that generation with other bytes, status says
// there is something to push. Either way a sync then brings both sides
// together and a further sync moves nothing.
func TestStatusAfterPushWithLostReply(t *testing.T) { eachBackend(t, testStatusAfterPushWithLostReply) }

func testStatusAfterPushWithLostReply(t *testing.T, be *backend) {
	for _, c := range []struct {
		name    string
		enc     bool
		arrived bool // the manifest reached the server
		other   bool // another writer then published that generation
		inSync  bool // what status should say
	}{
		{name: "arrived", arrived: true, inSync: true},
		{name: "arrived encrypted", enc: true, arrived: true, inSync: true},
		{name: "lost"},
		{name: "another writer's", other: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			remote := remoteFor(t, be)
			a, b := newMachine(t, be, remote), newMachine(t, be, remote)
			if c.enc {
				id, err := age.GenerateX25519Identity()
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range []*machine{a, b} {
					m.opts.Recipients, m.opts.Identities = []age.Recipient{id.Recipient()}, []age.Identity{id}
				}
			}
			pa := a.newSession(t, "/lost/reply", 2)
			a.run(t, "push")
			b.run(t, "pull")
			pb := sessionFiles(t, b.agentDir)[filepath.Base(pa)]
			appendTo(t, pa, "more", 2)
			fired, reconnect := loseReply(t, be, a, "pi", c.arrived)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rep, err := a.remote(t).Push(ctx)
			if err == nil && rep.Sessions[0].Err == nil {
				t.Fatalf("push with its reply lost succeeded: %+v", rep.Sessions)
			}
			if fired() != c.arrived {
				t.Fatalf("the manifest reached the server: %t, want %t", fired(), c.arrived)
			}
			reconnect()
			if c.other {
				appendTo(t, pb, "b", 1)
				b.run(t, "push")
			}
			got := states(a.run(t, "status"))["pi/"+filepath.Base(pa)]
			if (got == "in sync") != c.inSync {
				t.Errorf("status after the push: %q; want in sync: %t", got, c.inSync)
			}
			for range 2 {
				a.run(t, "sync")
				b.run(t, "sync")
			}
			ea, _ := entries(t, pa)
			eb, _ := entries(t, pb)
			if len(ea) != len(eb) {
				t.Errorf("a has %d entries, b %d", len(ea), len(eb))
			}
			for _, m := range []*machine{a, b} {
				if rep := m.run(t, "sync"); moved(rep) != 0 {
					t.Errorf("a further sync moved %d bytes", moved(rep))
				}
			}
		})
	}
}

// The same for an AgentUse session directory: a push whose manifest
// arrived but whose reply was lost is recognised by the next status.
func TestStatusAfterAgentUsePushWithLostReply(t *testing.T) {
	eachBackend(t, testStatusAfterAgentUsePushWithLostReply)
}

func testStatusAfterAgentUsePushWithLostReply(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	a.opts.AgentDir = ""
	a.opts.AgentUseDir = filepath.Join(filepath.Dir(a.agentDir), "data")
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
	dir := w.Dir()
	w.Close()
	a.run(t, "push")
	w, err = st.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddMessage(agentuse.MessageSpec{Task: "more", ModelID: "p:m"}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	fired, reconnect := loseReply(t, be, a, "agentuse", true)
	rep, err := a.remote(t).Push(ctx)
	if err == nil && rep.Sessions[0].Err == nil {
		t.Fatalf("push with its reply lost succeeded: %+v", rep.Sessions)
	}
	if !fired() {
		t.Fatal("the manifest did not reach the server")
	}
	reconnect()
	if got := states(a.run(t, "status")); got["agentuse/0123456789abcdef/"+filepath.Base(dir)] != "in sync" {
		t.Errorf("status after the push: %v, want in sync", got)
	}
	a.run(t, "sync")
	if rep := a.run(t, "sync"); moved(rep) != 0 {
		t.Errorf("a further sync moved %d bytes", moved(rep))
	}
}
