package replica_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/replica"
)

// hostileManifest publishes m (a manifest of the session name on remote)
// as the next generation.
func hostileManifest(t *testing.T, be *backend, remote, name string, m replica.Manifest) {
	t.Helper()
	m.Gen++
	mb, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	be.put(t, remote, fmt.Sprintf("m/pi/%s/%010d", name, m.Gen), mb)
}

// inlineSeg is the inline segment of data.
func inlineSeg(data []byte) replica.Segment {
	sum := sha256.Sum256(data)
	sumHex := hex.EncodeToString(sum[:])
	return replica.Segment{Object: "d/" + sumHex, SHA256: sumHex, Size: int64(len(data)), Plain: int64(len(data)), Lines: bytes.Count(data, []byte("\n")), Data: data}
}

// withInline publishes the next generation of the session name on
// remote: its newest manifest's segments and an inline one of data.
func withInline(t *testing.T, be *backend, remote, name string, data []byte) {
	t.Helper()
	m := manifestOf(t, be, remote, name)
	seg := inlineSeg(data)
	m.Segments = append(m.Segments, seg)
	m.Size += seg.Plain
	m.Lines += seg.Lines
	hostileManifest(t, be, remote, name, m)
}

// pushedSession pushes a session of n pairs in data segments and returns
// its path and manifest.
func pushedSession(t *testing.T, be *backend, remote string, n int) (string, replica.Manifest) {
	t.Helper()
	a := newMachine(t, be, remote)
	a.opts.InlineMax = -1
	path := a.newSession(t, "/b/p", n)
	a.run(t, "push")
	return path, manifestOf(t, be, remote, filepath.Base(path))
}

// A manifest that names one segment many times is refused, before any
// segment is fetched (issue 39, 3: 20,000 times made an 80,001-line file
// after 20,005 GETs).
func TestManifestNamingASegmentTwice(t *testing.T) {
	be := &backend{}
	remote := remoteFor(t, be)
	path, m := pushedSession(t, be, remote, 2)
	name := filepath.Base(path)
	seg := m.Segments[len(m.Segments)-1]
	for range 2000 {
		m.Segments = append(m.Segments, seg)
		m.Size += seg.Plain
		m.Lines += seg.Lines
	}
	hostileManifest(t, be, remote, name, m)
	fresh := newMachine(t, be, remote)
	counting := newCounting(clientFor(t, be, remote))
	fresh.opts.Client = counting
	fresh.run(t, "pull") // the generation before the refused one
	for id, n := range fileCount(t, sessionFiles(t, fresh.agentDir)[name]) {
		if n != 1 {
			t.Errorf("entry %s restored %d times", id, n)
		}
	}
	if n, want := counting.count("get", "d"), len(m.Segments)-2000; n > want {
		t.Errorf("the pull fetched %d segments, the valid generation has %d", n, want)
	}
	// Alone on the remote, it is refused.
	be.put(t, remote, fmt.Sprintf("m/pi/%s/%010d", name, m.Gen), []byte("{}"))
	other := newMachine(t, be, remote)
	rep, err := other.remote(t).Pull(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sessions) != 1 || !errors.Is(rep.Sessions[0].Err, replica.ErrCorruptRemote) || !strings.Contains(rep.Sessions[0].Err.Error(), "named twice") {
		t.Fatalf("pull of a manifest naming a segment twice: %+v", rep.Sessions)
	}
}

// A manifest larger than any sessctl writes is refused from its listed
// size, unread, by a pull and by a listing of the remote.
func TestManifestTooLarge(t *testing.T) {
	be := &backend{}
	remote := remoteFor(t, be)
	path, m := pushedSession(t, be, remote, 1)
	name := filepath.Base(path)
	m.Host = strings.Repeat("h", 40<<20) // 40 MiB of padding in a valid field
	hostileManifest(t, be, remote, name, m)
	fresh := newMachine(t, be, remote)
	prep := fresh.run(t, "pull") // the generation before
	if prep.Downloaded > 1<<20 {
		t.Errorf("the pull read %d bytes: the manifest too large to read was read", prep.Downloaded)
	}
	if len(sessionFiles(t, fresh.agentDir)) != 1 {
		t.Errorf("the pull did not restore the valid generation")
	}
	// A push never replaces it (it may be an older sessctl's, whole):
	// it fails, and the manifest stays.
	a := newMachine(t, be, remote)
	a.opts.AgentDir = filepath.Dir(filepath.Dir(filepath.Dir(path)))
	rep, err := a.remote(t).Push(context.Background())
	if err != nil || len(rep.Sessions) != 1 || rep.Sessions[0].Err == nil {
		t.Errorf("push over a manifest too large to read: %v %+v, want the session failed", err, rep)
	}
	if ks := be.keys(t, remote, "m/pi/"+name+"/"); len(ks) != 2 {
		t.Errorf("manifests after the push: %v, want both generations", ks)
	}
	got, err := fresh.remote(t).Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Gen != m.Gen || got[0].Err != nil {
		t.Errorf("list of the remote: %+v, want the valid generation %d", got, m.Gen)
	}
}

// A restore keeps the first line of each entry id: a remote copy that
// holds an entry twice (as pushes before the fix for issue 39, 2 wrote)
// restores it once, and a copy with other bytes is refused.
func TestRestoreKeepsFirstOfEachID(t *testing.T) {
	be := &backend{}
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	path := a.newSession(t, "/b/p", 2)
	name := filepath.Base(path)
	a.run(t, "push")
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(file, []byte("\n"))
	dup := lines[1]                                                         // the first entry, again
	other := bytes.Replace(lines[2], []byte("answer"), []byte("ANSWER"), 1) // the second, other bytes
	data := append(append([]byte{}, dup...), other...)
	withInline(t, be, remote, name, data)
	fresh := newMachine(t, be, remote)
	rep := fresh.run(t, "pull")
	got := fileCount(t, sessionFiles(t, fresh.agentDir)[name])
	for id, n := range got {
		if n != 1 {
			t.Errorf("entry %s restored %d times", id, n)
		}
	}
	if len(got) != 4 {
		t.Errorf("restored %d entries, want 4", len(got))
	}
	if r := rep.Sessions[0].Refused; len(r) != 1 || !strings.Contains(r[0].Reason, "other bytes") {
		t.Errorf("refused %+v, want the copy with other bytes", r)
	}
}

// A merge appends a remote line after its parent, even when the remote
// copy holds it first, and refuses one whose parent neither copy holds
// or that is its own parent (issue 39, 2 and 6: pi loads only a tree); a
// restore refuses a self-parent too.
func TestMergeParentsFirst(t *testing.T) {
	be := &backend{}
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	path := a.newSession(t, "/b/p", 1)
	name := filepath.Base(path)
	a.run(t, "push")
	b := newMachine(t, be, remote)
	b.run(t, "pull")
	_, last := lastEntry(t, path)
	custom := func(id, parent string) string {
		return `{"type":"custom","id":"` + id + `","parentId":"` + parent + `","timestamp":"2026-03-01T09:00:00.000Z","customType":"x"}` + "\n"
	}
	data := []byte(custom("eeee0002", "eeee0001") + custom("eeee0001", last) + custom("eeee0003", "nowhere0") + custom("eeee0004", "eeee0004"))
	withInline(t, be, remote, name, data)
	bpath := sessionFiles(t, b.agentDir)[name]
	rep := b.run(t, "pull")
	got := fileCount(t, bpath)
	if got["eeee0001"] != 1 || got["eeee0002"] != 1 || got["eeee0003"] != 0 || got["eeee0004"] != 0 {
		t.Errorf("merged %v", got)
	}
	checkParentsFirst(t, bpath)
	if r := rep.Sessions[0].Refused; len(r) != 2 {
		t.Errorf("refused %v, want the orphan and the self-parent", r)
	}
	c := newMachine(t, be, remote)
	c.run(t, "pull")
	if got := fileCount(t, sessionFiles(t, c.agentDir)[name]); got["eeee0004"] != 0 {
		t.Errorf("a restore kept an entry that is its own parent")
	}
}

// lastEntry returns the number of entries of the file and its last id.
func lastEntry(t testing.TB, path string) (int, string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, last := 0, ""
	for _, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if e, err := jsonl.ParseEntry(l); err == nil && !e.IsHeader() {
			n, last = n+1, e.ID
		}
	}
	return n, last
}

// A pull that fails to restore a session the store lacks leaves nothing
// behind: no session file, and no lock or owner file (issue 39, 13).
func TestFailedRestoreLeavesNoLock(t *testing.T) {
	be := &backend{}
	remote := remoteFor(t, be)
	_, m := pushedSession(t, be, remote, 2)
	bad := m.Segments[len(m.Segments)-1]
	bad.SHA256 = strings.Repeat("0", 64) // a torn segment: its bytes do not match
	bad.Object = "d/" + bad.SHA256
	m.Segments = append(m.Segments, bad)
	m.Size += bad.Plain
	hostileManifest(t, be, remote, m.Name, m)
	fresh := newMachine(t, be, remote)
	rep, err := fresh.remote(t).Pull(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sessions) != 1 || rep.Sessions[0].Err == nil {
		t.Fatalf("pull of a torn copy: %+v", rep.Sessions)
	}
	var left []string
	filepath.WalkDir(fresh.agentDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("the failed restore left %v", left)
	}
}

// A restore that leaves out an unfinished last line, so that what it
// restores holds no assistant message, says in the refusal what pi will
// do to such a file (issue 39, 15).
func TestRestoreWithoutAssistantSaysSo(t *testing.T) {
	be := &backend{}
	remote := remoteFor(t, be)
	path, m := pushedSession(t, be, remote, 1)
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.TrimSuffix(file, []byte("\n")) // the assistant line, unfinished
	m.Segments, m.Size, m.Lines = []replica.Segment{inlineSeg(data)}, int64(len(data)), 3
	hostileManifest(t, be, remote, m.Name, m)
	fresh := newMachine(t, be, remote)
	rep := fresh.run(t, "pull")
	r := rep.Sessions[0].Refused
	if len(r) != 1 || !strings.Contains(r[0].Reason, "no assistant message") || !strings.Contains(r[0].Reason, "pi") {
		t.Errorf("refused %v, want the unfinished line, saying what pi does next", r)
	}
}

// A remote version of a local entry, with other bytes and a parent that
// comes later in the remote copy, is kept as a conflict copy after that
// parent: it never makes the whole merge fail (AppendLines refuses a
// child before its parent), and the session's own lines still go up.
func TestConflictCopyAfterItsParent(t *testing.T) {
	be := &backend{}
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	path := a.newSession(t, "/b/p", 1)
	name := filepath.Base(path)
	a.run(t, "push")
	b := newMachine(t, be, remote)
	b.run(t, "pull")
	bpath := sessionFiles(t, b.agentDir)[name]
	_, last := lastEntry(t, bpath)
	custom := func(id, parent, data string) string {
		return `{"type":"custom","id":"` + id + `","parentId":"` + parent + `","timestamp":"2026-03-01T09:00:00.000Z","customType":"x","data":"` + data + `"}` + "\n"
	}
	f, err := os.OpenFile(bpath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(custom("ffff0001", last, "b's"))
	f.Close()
	data := []byte(custom("ffff0001", "ffff0002", "the remote's") + custom("ffff0002", last, "parent"))
	withInline(t, be, remote, name, data)
	rep := b.run(t, "pull")
	if s := rep.Sessions[0]; len(s.Conflicts) != 1 || len(s.Refused) != 0 {
		t.Errorf("pull: conflicts %v, refused %v; want the one conflict", s.Conflicts, s.Refused)
	}
	checkParentsFirst(t, bpath)
	if got := fileCount(t, bpath); got["ffff0002"] != 1 || len(got) < 5 {
		t.Errorf("merged %v", got)
	}
	b.run(t, "push")
}
