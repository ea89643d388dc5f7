package replica_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/replica"
)

// Writers beside a sync: pi appends to a session file without a lock and
// without telling anyone, at any moment of a push or a pull. These tests
// put its appends at the worst moments, deterministically, through a
// Client that runs a hook before a request; the tests with pi itself
// writing beside a looping sync are in pibeside_test.go.

// hookClient runs before(op, key) before each request of the Client it
// wraps.
type hookClient struct {
	replica.Client
	mu     sync.Mutex
	before func(op, key string)
}

func (c *hookClient) hook(op, key string) {
	c.mu.Lock()
	f := c.before
	c.mu.Unlock()
	if f != nil {
		f(op, key)
	}
}

func (c *hookClient) set(f func(op, key string)) {
	c.mu.Lock()
	c.before = f
	c.mu.Unlock()
}

func (c *hookClient) Get(ctx context.Context, key string) (io.ReadCloser, replica.ObjectInfo, error) {
	c.hook("get", key)
	return c.Client.Get(ctx, key)
}

func (c *hookClient) Put(ctx context.Context, key string, r io.Reader, size int64) (replica.ObjectInfo, error) {
	c.hook("put", key)
	return c.Client.Put(ctx, key, r, size)
}

func (c *hookClient) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (replica.ObjectInfo, error) {
	c.hook("put", key)
	return c.Client.PutIfAbsent(ctx, key, r, size)
}

func (c *hookClient) PutIfMatch(ctx context.Context, key string, r io.Reader, size int64, etag string) (replica.ObjectInfo, error) {
	c.hook("put", key)
	return c.Client.PutIfMatch(ctx, key, r, size, etag)
}

// hooked gives machine m a hookClient on the remote's real client.
func (m *machine) hooked(t testing.TB, be *backend) *hookClient {
	t.Helper()
	hc := &hookClient{Client: clientFor(t, be, m.opts.Remote)}
	m.opts.Client = hc
	return hc
}

// piWriter appends entries to a session file the way pi does: one
// write of a whole line on an O_APPEND descriptor, no lock, each entry a
// child of the last one it wrote itself (pi's leaf is in its memory; it
// never sees what others append to the file).
type piWriter struct {
	path string
	leaf string
	tag  string
	n    int
}

// newPiWriter starts a writer whose leaf is the last entry of the file.
func newPiWriter(t testing.TB, path, tag string) *piWriter {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w := &piWriter{path: path, tag: tag}
	for _, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if e, err := jsonl.ParseEntry(l); err == nil && !e.IsHeader() {
			w.leaf = e.ID
		}
	}
	return w
}

// add appends n entries and returns their ids.
func (w *piWriter) add(t testing.TB, n int) []string {
	t.Helper()
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	for range n {
		w.n++
		sum := sha256.Sum256(fmt.Appendf(nil, "%s %d", w.tag, w.n))
		id := hex.EncodeToString(sum[:4])
		line := fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":"2026-03-01T09:%02d:%02d.000Z","message":{"role":"toolResult","toolCallId":"call_%d","toolName":"bash","content":[{"type":"text","text":"%s output %d"}],"isError":false,"timestamp":%d}}`+"\n",
			id, w.leaf, w.n/60%60, w.n%60, w.n, w.tag, w.n, 1772355600000+w.n)
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
		w.leaf = id
		ids = append(ids, id)
	}
	return ids
}

// remoteCount returns how many times each entry id stands in the remote
// copy of the session named name, read as a fresh machine reads it.
func remoteCount(t testing.TB, m *machine, name string) map[string]int {
	t.Helper()
	var buf bytes.Buffer
	if _, _, err := m.remote(t).ReadSession(context.Background(), name, &buf); err != nil {
		t.Fatal(err)
	}
	return idCounts(t, buf.Bytes())
}

// fileCount is remoteCount for a local file.
func fileCount(t testing.TB, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return idCounts(t, data)
}

func idCounts(t testing.TB, data []byte) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		e, err := jsonl.ParseEntry(l)
		if err != nil || e.IsHeader() || strings.Contains(string(l), `"label":"sessctl sync: remote tip"`) {
			continue
		}
		out[e.ID]++
	}
	return out
}

// missingOrTwice describes the ids of want that got lacks or holds more
// than once, and the ids got holds twice.
func missingOrTwice(want []string, got map[string]int) string {
	var missing, twice []string
	for _, id := range want {
		if got[id] == 0 {
			missing = append(missing, id)
		}
	}
	for id, n := range got {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s x%d", id, n))
		}
	}
	if len(missing) == 0 && len(twice) == 0 {
		return ""
	}
	return fmt.Sprintf("%d missing %v, %d more than once %v", len(missing), missing, len(twice), twice)
}

// A push records only what it uploaded: pi appending while the push
// publishes its manifest leaves lines the next push must upload, and
// neither push nor status may say "in sync" meanwhile (issue 39, 1).
func TestPushBesideAppend(t *testing.T) { eachBackend(t, testPushBesideAppend) }

func testPushBesideAppend(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	path := a.newSession(t, "/home/dev/p", 2)
	name := filepath.Base(path)
	all := keys(mustEntries(t, path))
	hc := a.hooked(t, be)
	pi := newPiWriter(t, path, "pi")
	for round := range 3 {
		// pi appends while the manifest goes up: after the push read the
		// file, before it records what it saw.
		fired := false
		hc.set(func(op, key string) {
			if op == "put" && strings.HasPrefix(key, "m/") && !fired {
				fired = true
				all = append(all, pi.add(t, 2)...)
			}
		})
		all = append(all, pi.add(t, 1)...)
		a.run(t, "push")
		hc.set(nil)
		if !fired {
			t.Fatalf("round %d: the push published no manifest", round)
		}
		if st := a.run(t, "status").Sessions[0].State; st == "in sync" {
			t.Errorf("round %d: status says %q while pi's last lines were never pushed", round, st)
		}
		rep := a.run(t, "push")
		if got := rep.Sessions[0].Pushed; got != 2 {
			t.Errorf("round %d: the next push uploaded %d lines, want pi's 2", round, got)
		}
		if st := a.run(t, "status").Sessions[0].State; st != "in sync" {
			t.Errorf("round %d: status %q after everything was pushed", round, st)
		}
	}
	if d := missingOrTwice(all, remoteCount(t, a, name)); d != "" {
		t.Errorf("remote copy: %s", d)
	}
	c := newMachine(t, be, remote)
	c.run(t, "pull")
	if d := missingOrTwice(all, fileCount(t, sessionFiles(t, c.agentDir)[name])); d != "" {
		t.Errorf("fresh machine's pull: %s", d)
	}
}

// mustEntries returns the entry lines of the file at path by id.
func mustEntries(t testing.TB, path string) map[string]string {
	t.Helper()
	e, _ := entries(t, path)
	return e
}

// lstatHook is the real filesystem, running before(name) before each
// Lstat: the moment a run looks at a file to record what it saw.
type lstatHook struct {
	vfs.FS
	before func(name string)
}

func (h lstatHook) Lstat(name string) (fs.FileInfo, error) {
	h.before(name)
	return h.FS.Lstat(name)
}

// A pull that merges while pi appends records only what it knows of:
// pi's line appended between the merge and the record is pushed by the
// next push, and no status says "in sync" before.
func TestPullBesideAppend(t *testing.T) { eachBackend(t, testPullBesideAppend) }

func testPullBesideAppend(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	b := newMachine(t, be, remote)
	path := a.newSession(t, "/home/dev/p", 2)
	name := filepath.Base(path)
	a.run(t, "push")
	b.run(t, "pull")
	bpath := sessionFiles(t, b.agentDir)[name]
	b.run(t, "push")
	appendTo(t, path, "a", 2)
	a.run(t, "push")
	// B's pull merges A's lines; pi appends on B after the merge, while
	// the pull is still running.
	pi := newPiWriter(t, bpath, "pi")
	var piIDs []string
	before := len(fileCount(t, bpath))
	b.opts.FS = lstatHook{FS: vfs.OS(), before: func(p string) {
		if p == bpath && piIDs == nil && len(fileCount(t, bpath)) > before {
			piIDs = pi.add(t, 1)
		}
	}}
	b.run(t, "pull")
	b.opts.FS = nil
	if piIDs == nil {
		t.Fatal("the pull looked at the file no more after its merge")
	}
	if st := b.run(t, "status").Sessions[0].State; st == "in sync" {
		t.Errorf("status says %q while pi's line was never pushed", st)
	}
	b.run(t, "push")
	if got := remoteCount(t, b, name); got[piIDs[0]] != 1 {
		t.Errorf("pi's line %s stands %d times in the remote copy, want once", piIDs[0], got[piIDs[0]])
	}
}

// Two machines, pi appending on both and never seeing what a pull merged
// below it: every entry reaches the other machine and the remote once
// (issue 39, 2). pi's own entries never descend from a sync marker, so
// markers stay held back and the pushes must not upload again what they
// uploaded after one.
func TestTwoMachinesBesidePi(t *testing.T) { eachBackend(t, testTwoMachinesBesidePi) }

func testTwoMachinesBesidePi(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	b := newMachine(t, be, remote)
	apath := a.newSession(t, "/home/dev/p", 1)
	name := filepath.Base(apath)
	a.run(t, "push")
	b.run(t, "pull")
	bpath := sessionFiles(t, b.agentDir)[name]
	all := keys(mustEntries(t, apath))
	pa, pb := newPiWriter(t, apath, "pa"), newPiWriter(t, bpath, "pb")
	for round := range 6 {
		all = append(all, pa.add(t, 2)...)
		all = append(all, pb.add(t, 3)...)
		switch round % 3 {
		case 0:
			a.run(t, "sync")
			b.run(t, "sync")
		case 1:
			b.run(t, "pull")
			all = append(all, pb.add(t, 1)...)
			b.run(t, "push")
			a.run(t, "push")
			a.run(t, "pull")
		case 2:
			a.run(t, "pull")
			all = append(all, pa.add(t, 1)...)
			a.run(t, "push")
			b.run(t, "sync")
		}
	}
	for _, m := range []*machine{a, b, a, b} {
		m.run(t, "pull")
		m.run(t, "push")
	}
	for _, side := range []struct {
		what string
		got  map[string]int
	}{
		{"A", fileCount(t, apath)},
		{"B", fileCount(t, bpath)},
		{"the remote", remoteCount(t, a, name)},
	} {
		if d := missingOrTwice(all, side.got); d != "" {
			t.Errorf("%s: %s", side.what, d)
		}
		if len(side.got) != len(all) {
			t.Errorf("%s holds %d entries, want %d", side.what, len(side.got), len(all))
		}
	}
	for _, m := range []*machine{a, b} {
		if st := m.run(t, "status").Sessions[0].State; st != "in sync" {
			t.Errorf("status %q after pull and push on each side", st)
		}
	}
	c := newMachine(t, be, remote)
	c.run(t, "pull")
	cpath := sessionFiles(t, c.agentDir)[name]
	if d := missingOrTwice(all, fileCount(t, cpath)); d != "" {
		t.Errorf("fresh machine's pull: %s", d)
	}
	checkParentsFirst(t, cpath)
}

// An AgentUse session written while it is pushed: the part the agent
// adds during the push goes up with the next push, and status does not
// say "in sync" meanwhile (issue 39, 1, for the other format).
func TestAgentUsePushBesideWrite(t *testing.T) { eachBackend(t, testAgentUsePushBesideWrite) }

func testAgentUsePushBesideWrite(t *testing.T, be *backend) {
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
	defer w.Close()
	mid, err := w.AddMessage(agentuse.MessageSpec{Task: "fix it", ModelID: "p:m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddPart(mid, agentuse.TextPart("hello", w.Now())); err != nil {
		t.Fatal(err)
	}
	hc := a.hooked(t, be)
	fired := false
	hc.set(func(op, key string) {
		if op == "put" && strings.HasPrefix(key, "m/") && !fired {
			fired = true
			if _, err := w.AddPart(mid, agentuse.TextPart("written during the push", w.Now())); err != nil {
				t.Error(err)
			}
		}
	})
	a.run(t, "push")
	hc.set(nil)
	if !fired {
		t.Fatal("the push published no manifest")
	}
	if s := a.run(t, "status").Sessions[0].State; s == "in sync" {
		t.Errorf("status says %q while the part written during the push is not on the remote", s)
	}
	if rep := a.run(t, "push"); rep.Sessions[0].Pushed == 0 {
		t.Errorf("the next push uploaded nothing")
	}
	b := newMachine(t, be, remote)
	b.opts.AgentDir = ""
	b.opts.AgentUseDir = filepath.Join(filepath.Dir(b.agentDir), "data")
	b.run(t, "pull")
	dirB := filepath.Join(b.opts.AgentUseDir, "agentuse", "project", "0123456789abcdef", "session", filepath.Base(w.Dir()))
	if diff := cmp.Diff(readTree(t, w.Dir()), readTree(t, dirB)); diff != "" {
		t.Errorf("a fresh machine's copy differs (-local +fresh):\n%s", diff)
	}
}

// A push that moves the remote's inline segments into a data object, one
// of which the pushing machine has not pulled yet, must not count that
// object as its own: the next pull merges the other machine's lines it
// held (seen with pi on two machines: a pull then refused, for good,
// lines whose parent sat in that object).
func TestPushOverInlineNotPulled(t *testing.T) { eachBackend(t, testPushOverInlineNotPulled) }

func testPushOverInlineNotPulled(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	apath := a.newSession(t, "/home/dev/p", 1)
	name := filepath.Base(apath)
	a.run(t, "push") // one inline segment
	b.run(t, "pull")
	bpath := sessionFiles(t, b.agentDir)[name]
	bIDs := newPiWriter(t, bpath, "b").add(t, 2)
	b.run(t, "push") // a second inline segment, which a has not pulled
	if m := manifestOf(t, be, remote, name); len(m.Segments) != 2 || m.Segments[1].Data == nil {
		t.Fatalf("the remote holds %d segments, want two inline ones", len(m.Segments))
	}
	pa := newPiWriter(t, apath, "a")
	for range 40 { // past the inline bound: the inline segments move into a data object
		pa.add(t, 1)
		appendTo(t, apath, strings.Repeat("x", 2000), 1)
	}
	a.run(t, "push")
	if m := manifestOf(t, be, remote, name); m.Segments[0].Data != nil {
		t.Fatalf("the push kept the inline segments")
	}
	a.run(t, "pull")
	got := fileCount(t, apath)
	for _, id := range bIDs {
		if got[id] != 1 {
			t.Errorf("b's entry %s stands %d times in a's file after a's pull, want once", id, got[id])
		}
	}
}

// A held sync marker that is no longer where the record says (the file
// was rewritten before the 4 KiB the record checks) makes the push
// compare the whole file again, not fail on every run.
func TestHeldMarkerRewritten(t *testing.T) {
	be := &backend{}
	remote := remoteFor(t, be)
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	apath := a.newSession(t, "/home/dev/p", 1)
	name := filepath.Base(apath)
	a.run(t, "push")
	b.run(t, "pull")
	bpath := sessionFiles(t, b.agentDir)[name]
	pb := newPiWriter(t, bpath, "b")
	pb.add(t, 1)
	appendTo(t, apath, "a", 1)
	a.run(t, "push")
	b.run(t, "pull") // merges a's lines below b's leaf: a marker
	data, err := os.ReadFile(bpath)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(data, []byte(`"label":"sessctl sync: remote tip"`))
	if at < 0 {
		t.Fatal("no marker after the pull")
	}
	pb.add(t, 60) // well past 4 KiB after the marker
	b.run(t, "push")
	// Rewrite the marker's line in place, same length: another id.
	data, _ = os.ReadFile(bpath)
	start := bytes.LastIndexByte(data[:at], '\n') + 1
	idAt := start + bytes.Index(data[start:], []byte(`"id":"`)) + len(`"id":"`)
	data[idAt] ^= 1
	if err := os.WriteFile(bpath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// A writer whose leaf was the marker (sessctl's own) appends below it.
	e, err := jsonl.ParseEntry(data[start : start+bytes.IndexByte(data[start:], '\n')])
	if err != nil {
		t.Fatal(err)
	}
	markerID := []byte(e.ID)
	markerID[0] ^= 1 // its id as it was
	child := &piWriter{path: bpath, leaf: string(markerID), tag: "child"}
	ids := child.add(t, 1)
	b.run(t, "push") // fails the test on an error
	if got := remoteCount(t, b, name); got[ids[0]] != 1 {
		t.Errorf("b's last line stands %d times in the remote copy, want once", got[ids[0]])
	}
}
