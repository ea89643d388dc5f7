package replica_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/replica"
)

// putCopy publishes, as generation gen of the pi session name, a remote
// copy made of the given segments, the way another writer of the layout
// would (plain objects, correct checksums).
func putCopy(t testing.TB, be *backend, remote, name string, gen int64, segs ...[]byte) {
	t.Helper()
	m := replica.Manifest{Format: replica.FormatVersion, Kind: replica.KindPi, Name: name, Gen: gen, Host: "elsewhere"}
	for _, seg := range segs {
		h := sha256.Sum256(seg)
		sum := hex.EncodeToString(h[:])
		be.put(t, remote, "d/"+sum, seg)
		n := bytes.Count(seg, []byte{'\n'})
		m.Segments = append(m.Segments, replica.Segment{Object: "d/" + sum, SHA256: sum, Size: int64(len(seg)), Plain: int64(len(seg)), Lines: n})
		m.Size += int64(len(seg))
		m.Lines += n
	}
	data, _ := json.Marshal(m)
	be.put(t, remote, fmt.Sprintf("m/pi/%s/%010d", name, gen), data)
}

// manifestKeys lists the manifest keys of the remote.
func manifestKeys(t testing.TB, be *backend, remote string) []string {
	t.Helper()
	return be.keys(t, remote, "m/")
}

func sessionID(t testing.TB, path string) string {
	t.Helper()
	s, err := engine.OpenFile(context.Background(), path, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return s.SessionID()
}

// sessionFailed returns the error of the report's session name, failing
// the test when there is none.
func sessionFailed(t testing.TB, rep *replica.Report, err error, name string) error {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Sessions {
		if s.Name == name {
			if s.Err == nil {
				t.Fatalf("session %s did not fail: %+v", name, s)
			}
			return s.Err
		}
	}
	t.Fatalf("session %s is not in the report: %+v", name, rep.Sessions)
	return nil
}

// A remote copy filed under a session's name whose header is another
// session's is never merged into the local file, restored under that
// name, or pushed over: each is refused naming both ids, and the local
// file and the remote copy stay as they were.
func TestRemoteCopyOfAnotherSession(t *testing.T) { eachBackend(t, testRemoteCopyOfAnotherSession) }

func testRemoteCopyOfAnotherSession(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	px := a.newSession(t, "/x/proj", 2)
	a.run(t, "push")
	name := filepath.Base(px)
	idX := sessionID(t, px)
	// Another session, Y, filed under X's name by another writer.
	py := b.newSession(t, "/y/proj", 3)
	idY := sessionID(t, py)
	other, err := os.ReadFile(py)
	if err != nil {
		t.Fatal(err)
	}
	putCopy(t, be, remote, name, 2, other)
	keys := manifestKeys(t, be, remote)
	before, _ := os.ReadFile(px)
	appendTo(t, px, "local", 1) // something to push

	checkErr := func(what string, err error, ids ...string) {
		t.Helper()
		if !errors.Is(err, replica.ErrSessionMismatch) {
			t.Errorf("%s: %v, want ErrSessionMismatch", what, err)
			return
		}
		for _, id := range ids {
			if !strings.Contains(err.Error(), id) {
				t.Errorf("%s: %q does not name %s", what, err, id)
			}
		}
	}
	t.Run("pull", func(t *testing.T) {
		now, _ := os.ReadFile(px)
		rep, err := a.remote(t).Pull(context.Background())
		checkErr("pull", sessionFailed(t, rep, err, name), idX, idY)
		if after, _ := os.ReadFile(px); !bytes.Equal(after, now) {
			t.Errorf("the local file changed:\n%s", after[len(before):])
		}
	})
	t.Run("sync", func(t *testing.T) {
		now, _ := os.ReadFile(px)
		rep, err := a.remote(t).Sync(context.Background())
		checkErr("sync", sessionFailed(t, rep, err, name), idX, idY)
		if after, _ := os.ReadFile(px); !bytes.Equal(after, now) {
			t.Error("the local file changed")
		}
	})
	t.Run("push", func(t *testing.T) {
		rep, err := a.remote(t).Push(context.Background())
		checkErr("push", sessionFailed(t, rep, err, name), idX, idY)
		if got := manifestKeys(t, be, remote); strings.Join(got, " ") != strings.Join(keys, " ") {
			t.Errorf("the remote changed: %v, was %v", got, keys)
		}
	})
	t.Run("restore", func(t *testing.T) {
		c := newMachine(t, be, remote)
		rep, err := c.remote(t).Pull(context.Background())
		checkErr("restore", sessionFailed(t, rep, err, name), idY, strings.TrimSuffix(name[strings.IndexByte(name, '_')+1:], ".jsonl"))
		if files := sessionFiles(t, c.agentDir); len(files) != 0 {
			t.Errorf("restored %v", files)
		}
	})
	t.Run("push a misnamed file", func(t *testing.T) {
		// Y's file under a name of pi's shape with another id.
		d := newMachine(t, be, remoteFor(t, be))
		dir := filepath.Join(d.agentDir, "sessions", "--y-proj--")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), other, 0o600); err != nil {
			t.Fatal(err)
		}
		rep, err := d.remote(t).Push(context.Background())
		checkErr("push", sessionFailed(t, rep, err, name), idX, idY)
		if got := manifestKeys(t, be, d.opts.Remote); len(got) != 0 {
			t.Errorf("pushed %v", got)
		}
	})
	t.Run("push --verify over a torn copy", func(t *testing.T) {
		// A torn segment makes a verifying push rebuild the remote copy
		// from the local file: not when the copy is another session.
		torn := []byte(`{"type":"custom","customType":"x","id":"70e17000","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z"}` + "\n")
		putCopy(t, be, remote, name, 3, other, torn)
		h := sha256.Sum256(torn)
		be.put(t, remote, "d/"+hex.EncodeToString(h[:]), []byte("{"))
		keys := manifestKeys(t, be, remote)
		a.opts.Verify = true
		defer func() { a.opts.Verify = false }()
		rep, err := a.remote(t).Push(context.Background())
		checkErr("push --verify", sessionFailed(t, rep, err, name), idX, idY)
		if got := manifestKeys(t, be, remote); strings.Join(got, " ") != strings.Join(keys, " ") {
			t.Errorf("the remote changed: %v, was %v", got, keys)
		}
	})
}

// A remote copy holding lines that are not complete entry lines (not
// JSON, not an object, no id, a second header, a last line without its
// newline, in the middle of the copy and at its end; checksums correct):
// a restore and a merge take the complete entry lines only, report the
// others by object and line, and leave a file that pi can append to.
func TestPullTakesCompleteEntryLinesOnly(t *testing.T) {
	eachBackend(t, testPullTakesCompleteEntryLinesOnly)
}

func testPullTakesCompleteEntryLinesOnly(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	px := a.newSession(t, "/lines/proj", 1)
	a.run(t, "push")
	name := filepath.Base(px)
	own, err := os.ReadFile(px)
	if err != nil {
		t.Fatal(err)
	}
	_, hdr := entries(t, px)
	entry := func(id string) string {
		return `{"type":"custom","customType":"note","data":{"n":"` + id + `"},"id":"` + id + `","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z"}`
	}
	seg1 := []byte("not json\n" + "[1,2]\n" + `{"type":"custom","customType":"no id"}` + "\n" + hdr + "\n" + entry("e1000001") + "\n" + entry("e2000002"))
	seg2 := []byte(entry("e3000003") + "\n" + entry("e4000004"))
	putCopy(t, be, remote, name, 2, own, seg1, seg2)
	obj := func(seg []byte) string { h := sha256.Sum256(seg); return "d/" + hex.EncodeToString(h[:]) }
	want := []replica.RefusedLine{
		{Object: obj(seg1), Line: 1}, {Object: obj(seg1), Line: 2}, {Object: obj(seg1), Line: 3},
		{Object: obj(seg1), Line: 4}, {Object: obj(seg1), Line: 6}, {Object: obj(seg2), Line: 2},
	}
	check := func(t *testing.T, rep *replica.Report, path string) {
		t.Helper()
		got := rep.Sessions[0].Refused
		if len(got) != len(want) {
			t.Errorf("refused %v, want %d lines", got, len(want))
		}
		for i := range min(len(got), len(want)) {
			if got[i].Object != want[i].Object || got[i].Line != want[i].Line || got[i].Reason == "" {
				t.Errorf("refused[%d] = %v, want line %d of %s", i, got[i], want[i].Line, want[i].Object)
			}
		}
		if j := rep.JSON(); len(j.Sessions[0].Refused) != len(got) {
			t.Errorf("the JSON report lists %d refused lines, the report %d", len(j.Sessions[0].Refused), len(got))
		}
		data, _ := os.ReadFile(path)
		if !bytes.HasSuffix(data, []byte("\n")) {
			t.Errorf("%s does not end with a newline", path)
		}
		// pi appends with no care for what the file ends with.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(entry("p1000001") + "\n")
		f.Close()
		es, _ := entries(t, path) // fails on a line that is not an object
		for _, id := range []string{"e1000001", "e3000003", "p1000001"} {
			if _, ok := es[id]; !ok {
				t.Errorf("%s lacks entry %s", path, id)
			}
		}
		for _, id := range []string{"e2000002", "e4000004"} {
			if _, ok := es[id]; ok {
				t.Errorf("%s holds %s, a line without its newline", path, id)
			}
		}
		data, _ = os.ReadFile(path)
		if n := bytes.Count(data, []byte(`"type":"session"`)); n != 1 {
			t.Errorf("%s holds %d headers", path, n)
		}
	}
	t.Run("restore", func(t *testing.T) {
		b := newMachine(t, be, remote)
		rep := b.run(t, "pull")
		check(t, rep, sessionFiles(t, b.agentDir)[name])
	})
	t.Run("merge", func(t *testing.T) {
		rep := a.run(t, "pull")
		check(t, rep, px)
	})
}

// A remote copy that holds one id twice with different bytes is a
// conflict too: both versions are kept, under the ids the report names.
func TestPullKeepsBothVersionsOfARemoteDuplicate(t *testing.T) {
	eachBackend(t, testPullKeepsBothVersionsOfARemoteDuplicate)
}

func testPullKeepsBothVersionsOfARemoteDuplicate(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	px := a.newSession(t, "/dup/proj", 1)
	a.run(t, "push")
	own, err := os.ReadFile(px)
	if err != nil {
		t.Fatal(err)
	}
	entry := `{"type":"custom","customType":"note","data":{"v":%q},"id":"d0d0d0d0","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z"}` + "\n"
	putCopy(t, be, remote, filepath.Base(px), 2, own, []byte(fmt.Sprintf(entry, "one")+fmt.Sprintf(entry, "two")))
	rep := a.run(t, "pull")
	cs := rep.Sessions[0].Conflicts
	if len(cs) != 1 || cs[0].ID != "d0d0d0d0" || len(cs[0].Copies) != 2 {
		t.Fatalf("conflicts: %+v", cs)
	}
	es, _ := entries(t, px)
	for _, c := range []struct{ id, v string }{{"d0d0d0d0", "one"}, {cs[0].Copies[0], "one"}, {cs[0].Copies[1], "two"}} {
		if !strings.Contains(es[c.id], `"v":"`+c.v+`"`) {
			t.Errorf("entry %s: %q, want version %s", c.id, es[c.id], c.v)
		}
	}
	if rep := a.run(t, "sync"); len(rep.Sessions[0].Conflicts) != 0 {
		t.Errorf("a second pull: conflicts %+v", rep.Sessions[0].Conflicts)
	}
}
