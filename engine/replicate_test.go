package engine_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// AppendLines appends other copies' lines byte for byte (member order and
// spacing kept), moves the leaf to the last, and refuses a line whose id
// the session has (writing nothing of the call).
func TestAppendLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := openStore(t, engine.StoreOptions{Dir: dir}).Create(context.Background(), "/p", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.AppendMessage(raw(`{"role":"user","content":"hi","timestamp":1}`))
	first, err := s.AppendMessage(raw(`{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"stop","timestamp":2}`))
	if err != nil {
		t.Fatal(err)
	}
	lines := [][]byte{
		[]byte(`{"type":"custom","id":"aaaa0001","parentId":"` + first + `","timestamp":"2026-03-01T09:00:00.000Z","zeta":1,  "customType":"x"}`),
		[]byte(`{"type":"custom","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-03-01T09:00:01.000Z","customType":"y"}`),
	}
	before, _ := os.ReadFile(s.SessionFile())
	if err := s.AppendLines(lines); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(s.SessionFile())
	if want := string(before) + string(lines[0]) + "\n" + string(lines[1]) + "\n"; string(after) != want {
		t.Fatalf("file after AppendLines:\n%s\nwant:\n%s", after, want)
	}
	if leaf, _ := s.LeafID(); leaf != "aaaa0002" {
		t.Errorf("leaf %s, want aaaa0002", leaf)
	}
	err = s.AppendLines([][]byte{[]byte(`{"type":"custom","id":"bbbb0001","parentId":null,"timestamp":"t"}`), lines[0]})
	if !errors.Is(err, engine.ErrDuplicateID) {
		t.Fatalf("duplicate id: %v, want ErrDuplicateID", err)
	}
	if again, _ := os.ReadFile(s.SessionFile()); string(again) != string(after) {
		t.Error("a refused AppendLines wrote to the file")
	}
	if err := s.AppendLines([][]byte{[]byte(`{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}`)}); err == nil || !strings.Contains(err.Error(), "not an entry") {
		t.Errorf("a header line: %v", err)
	}
	// What pi cannot read is refused; a role pi does not know (an
	// extension's) is another copy's business and is kept.
	for _, l := range []string{
		`{"type":"message","id":"cccc0001","parentId":"aaaa0002","timestamp":"t","message":null}`,
		`{"type":"message","id":"cccc0001","parentId":"aaaa0002","timestamp":"t","message":"x"}`,
		`{"type":"message","id":"cccc0001","parentId":"aaaa0002","timestamp":"t"}`,
		`{"type":"message","id":"cccc0001","parentId":"aaaa0002","timestamp":"t","message":{"content":"hi"}}`,
		`{"type":"message","id":"cccc0001","parentId":"aaaa0002","timestamp":"t","message":{"role":7}}`,
	} {
		if err := s.AppendLines([][]byte{[]byte(l)}); err == nil || !strings.Contains(err.Error(), "string role") {
			t.Errorf("%s: %v", l, err)
		}
	}
	if again, _ := os.ReadFile(s.SessionFile()); string(again) != string(after) {
		t.Error("a refused message line was written")
	}
	if err := s.AppendLines([][]byte{[]byte(`{"type":"message","id":"cccc0001","parentId":"aaaa0002","timestamp":"t","message":{"role":"x-ext","content":"hi"}}`)}); err != nil {
		t.Errorf("an extension's role: %v", err)
	}
}

// AppendLines refuses what pi cannot load (issue 39, 6): an entry that is
// its own parent (pi 0.73.1 never finishes opening the file), one whose
// parent the session lacks, and a parent cycle within the call; a child
// after its parent in the same call is taken.
func TestAppendLinesTreeOnly(t *testing.T) {
	t.Parallel()
	s, err := openStore(t, engine.StoreOptions{Dir: t.TempDir()}).Create(context.Background(), "/p", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.AppendMessage(raw(`{"role":"user","content":"hi","timestamp":1}`))
	leaf, err := s.AppendMessage(raw(`{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"stop","timestamp":2}`))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(s.SessionFile())
	entry := func(id, parent string) []byte {
		return []byte(`{"type":"custom","id":"` + id + `","parentId":` + parent + `,"timestamp":"2026-03-01T09:00:00.000Z","customType":"x"}`)
	}
	for name, lines := range map[string][][]byte{
		"self-parent":           {entry("dddd0001", `"dddd0001"`)},
		"missing parent":        {entry("dddd0001", `"nowhere0"`)},
		"child before parent":   {entry("dddd0002", `"dddd0001"`), entry("dddd0001", `"`+leaf+`"`)},
		"cycle":                 {entry("dddd0001", `"dddd0002"`), entry("dddd0002", `"dddd0001"`)},
		"a number for a parent": {entry("dddd0001", `7`)},
	} {
		if err := s.AppendLines(lines); err == nil || !strings.Contains(err.Error(), "the parent of entry") {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
	if after, _ := os.ReadFile(s.SessionFile()); string(after) != string(before) {
		t.Fatal("a refused AppendLines wrote to the file")
	}
	if err := s.AppendLines([][]byte{entry("dddd0001", `"`+leaf+`"`), entry("dddd0002", `"dddd0001"`), entry("dddd0003", `null`)}); err != nil {
		t.Errorf("a child after its parent, and a root: %v", err)
	}
}

// recorder is an engine.Replicator that records its calls.
type recorder struct {
	mu     sync.Mutex
	calls  []string
	closed []string
}

func (r *recorder) Appended(path string) { r.mu.Lock(); r.calls = append(r.calls, path); r.mu.Unlock() }
func (r *recorder) Closed(path string)   { r.mu.Lock(); r.closed = append(r.closed, path); r.mu.Unlock() }

// The Replicator is told of every write (the file's creation included) and
// of Close, and of nothing for a session that never wrote.
func TestReplicatorHook(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := &recorder{}
	s, err := openStore(t, engine.StoreOptions{Dir: dir, Replicator: rec}).Create(context.Background(), "/p", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.AppendModelChange("p", "m") // kept in memory (pi's rule)
	if len(rec.calls) != 0 {
		t.Fatalf("told of %d writes before the file exists", len(rec.calls))
	}
	s.AppendMessage(raw(`{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"stop","timestamp":2}`))
	s.AppendSessionInfo("n")
	path := s.SessionFile()
	s.Close()
	if len(rec.calls) != 2 || rec.calls[0] != path || len(rec.closed) != 1 || rec.closed[0] != path {
		t.Errorf("calls %v, closed %v; want 2 writes and one close of %s", rec.calls, rec.closed, path)
	}
	idle := &recorder{}
	r, err := openStore(t, engine.StoreOptions{Replicator: idle}).Open(context.Background(), path, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if len(idle.calls)+len(idle.closed) != 0 {
		t.Errorf("a session that wrote nothing told the replicator %v %v", idle.calls, idle.closed)
	}
}

// leaser is an engine.Replicator and engine.Leaser whose leases are
// refused while held is set, and whose Valid fails while invalid is set.
type leaser struct {
	recorder
	mu2      sync.Mutex
	held     *engine.LockedError // refuse the lease, naming this holder
	invalid  error               // what Valid returns
	taken    []string
	waits    []bool
	released []string
}

type testLease struct {
	l    *leaser
	path string
}

func (l *leaser) Lease(ctx context.Context, path string, wait bool) (engine.WriterLease, error) {
	l.mu2.Lock()
	defer l.mu2.Unlock()
	l.waits = append(l.waits, wait)
	if l.held != nil {
		return nil, l.held
	}
	l.taken = append(l.taken, path)
	return &testLease{l: l, path: path}, nil
}

func (tl *testLease) Valid() error {
	tl.l.mu2.Lock()
	defer tl.l.mu2.Unlock()
	return tl.l.invalid
}

func (tl *testLease) Release() error {
	tl.l.mu2.Lock()
	defer tl.l.mu2.Unlock()
	tl.l.released = append(tl.l.released, tl.path)
	return nil
}

// A Replicator that is a Leaser gives every write-mode session a lease:
// taken at Create and Open (with OpenOptions.Wait passed on), asked
// before every write (a write it refuses writes nothing and is not
// sticky), released once at Close; a refused lease fails the open with
// the holder's ErrLocked and leaves the local lock free. Read-only opens
// take none.
func TestLeaserHook(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	l := &leaser{}
	st := openStore(t, engine.StoreOptions{Dir: dir, Replicator: l})
	s, err := st.Create(ctx, "/p", engine.CreateOptions{WriteAtOnce: true})
	if err != nil {
		t.Fatal(err)
	}
	path := s.SessionFile()
	if len(l.taken) != 1 || l.taken[0] != path {
		t.Fatalf("leases taken at Create: %v, want %s", l.taken, path)
	}
	if _, err := s.AppendMessage(raw(`{"role":"user","content":"hi","timestamp":1}`)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	lost := errors.New("lease lost (test)")
	l.mu2.Lock()
	l.invalid = lost
	l.mu2.Unlock()
	if _, err := s.AppendMessage(raw(`{"role":"user","content":"again","timestamp":2}`)); !errors.Is(err, lost) {
		t.Fatalf("append without a valid lease: %v, want the lease's error", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("a write the lease refused changed the file")
	}
	l.mu2.Lock()
	l.invalid = nil
	l.mu2.Unlock()
	if _, err := s.AppendMessage(raw(`{"role":"user","content":"again","timestamp":2}`)); err != nil {
		t.Fatalf("append once the lease is valid again: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(l.released) != 1 || l.released[0] != path {
		t.Fatalf("released %v, want %s once", l.released, path)
	}

	// Held elsewhere: the open fails naming the holder, and the local
	// lock is not left taken.
	l.held = &engine.LockedError{Path: "s3://b/l/pi/x", Reason: "held by another machine (test)"}
	_, err = st.Open(ctx, path, engine.OpenOptions{Wait: true})
	if !errors.Is(err, engine.ErrLocked) || !strings.Contains(err.Error(), "held by another machine (test)") {
		t.Fatalf("open while another machine holds the lease: %v", err)
	}
	if w := l.waits[len(l.waits)-1]; !w {
		t.Error("OpenOptions.Wait was not passed to Lease")
	}
	l.held = nil
	s, err = openStore(t, engine.StoreOptions{Dir: dir}).Open(ctx, path, engine.OpenOptions{})
	if err != nil {
		t.Fatalf("the refused open left the local lock taken: %v", err)
	}
	s.Close()
	n := len(l.taken)
	r, err := st.Open(ctx, path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if len(l.taken) != n {
		t.Error("a read-only open took a lease")
	}
}
