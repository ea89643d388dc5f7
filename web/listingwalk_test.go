package web

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// TestListingAgentUseWalk: the listing takes AgentUse sessions from the
// one walk, through the handler's filesystem: a session eight
// directories down is listed (the listing's own walk stopped at six), a
// subagent is listed under its parent, a session in .trash is not, and a
// project directory that cannot be read is named among the warnings
// while the others are listed.
func TestListingAgentUseWalk(t *testing.T) {
	root := t.TempDir()
	write := func(p, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	session := func(dir, id, parent string) string {
		body := `{"id":"` + id + `","agent":{"id":"ag-` + id + `","name":"ag-` + id + `"},"time":{"created":1767225600000,"updated":1767225600000}}`
		if parent != "" {
			body = `{"id":"` + id + `","parentSessionID":"` + parent + `","agent":{"id":"ag-` + id + `","name":"ag-` + id + `","isSubAgent":true},"time":{"created":1767225600000,"updated":1767225600000}}`
		}
		write(filepath.Join(dir, "session.json"), body)
		return dir
	}
	deep := session(filepath.Join(root, "a", "b", "c", "d", "e", "f", "g", "01KDEEP0000000000000000000-ag"), "01KDEEP0000000000000000000", "")
	top := session(filepath.Join(root, "p1", "session", "01KTOP00000000000000000000-ag"), "01KTOP00000000000000000000", "")
	sub := session(filepath.Join(top, "subagent", "01KSUB00000000000000000000-ag"), "01KSUB00000000000000000000", "01KTOP00000000000000000000")
	session(filepath.Join(root, "p1", "session", ".trash", "x", "01KTRASH000000000000000000-ag"), "01KTRASH000000000000000000", "")
	bad := filepath.Join(root, "p2")
	session(filepath.Join(bad, "session", "01KBAD00000000000000000000-ag"), "01KBAD00000000000000000000", "")

	fsys := vfstest.NewFaultFS(vfs.OS())
	fsys.Inject(vfstest.Fault{Op: vfstest.OpReadDir, Err: syscall.EACCES, Repeat: true, Match: func(p string) bool { return p == bad }})
	s := newServer(t, Options{FS: fsys, Stores: []layout.Place{{Name: "pi", Format: layout.FormatJSONL}, {Name: "agentuse", Format: layout.FormatAgentUse, Root: root}}})
	s.h.list.invalidate()
	s.h.list.wait(10 * time.Second)
	ls := s.h.list.get(10 * time.Second)
	if ls == nil {
		t.Fatal("no listing")
	}
	var ids []string
	for _, r := range ls.rows {
		ids = append(ids, r.ID)
	}
	for _, dir := range []string{deep, top, sub} {
		if ls.byPath[dir] == nil {
			t.Errorf("%s is not listed (listed: %v)", dir, ids)
		}
	}
	if r := ls.byPath[sub]; r != nil && (r.up == nil || r.up.Path != top) {
		t.Errorf("the subagent is not listed under its parent: %+v", r.up)
	}
	if len(ls.rows) != 3 {
		t.Errorf("listed %v, want the three sessions outside .trash and the unreadable project", ids)
	}
	if ls.nwarn != 1 || !strings.Contains(ls.warns[0], bad) {
		t.Errorf("warnings %v, want one naming %s", ls.warns, bad)
	}
	if list := s.mustGet("/"); !strings.Contains(list, s.h.sessionURL(deep, layout.FormatAgentUse)) {
		t.Error("the list page does not link to the deep session")
	}
}

// TestSessionPageFaults: a session page reads its file through the
// handler's filesystem: a read that fails shows the error (500), and the
// page reads again once the disk is well.
func TestSessionPageFaults(t *testing.T) {
	fsys := vfstest.NewFaultFS(vfs.OS())
	s := newServer(t, Options{FS: fsys})
	file := filepath.Join(s.root, "--w--", "2026-01-01T00-00-00-000Z_a.jsonl")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	data := `{"type":"session","version":3,"id":"f1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n" +
		`{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"faulty disk prompt","timestamp":1}}` + "\n"
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	page := s.page(file)
	fsys.Inject(vfstest.Fault{Op: vfstest.OpRead, Repeat: true, Match: func(p string) bool { return p == file }})
	code, body := s.get(page)
	if code != 500 || !strings.Contains(body, "input/output error") {
		t.Errorf("a failing read: %d\n%.300s", code, body)
	}
	fsys.Clear()
	if body := s.mustGet(page); !strings.Contains(body, "faulty disk prompt") {
		t.Error("the page does not read again once the disk is well")
	}
}
