package agentuse_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// walkFixture writes a session.json (and one message) in dir.
func walkFixture(t *testing.T, dir, id, parent string) {
	t.Helper()
	body := `{"id":"` + id + `","agent":{"id":"ag","name":"ag"},"time":{"created":1,"updated":1}}`
	if parent != "" {
		body = `{"id":"` + id + `","parentSessionID":"` + parent + `","agent":{"id":"ag","name":"ag","isSubAgent":true},"time":{"created":1,"updated":1}}`
	}
	for p, data := range map[string]string{
		"session.json":             body,
		"msg_1/message.json":       `{"id":"msg_1","time":{"created":1}}`,
		"msg_1/part/prt_1.json":    `{"id":"prt_1","type":"text","text":"x"}`,
		"msg_1/artifact/out.txt":   "out",
		"msg_1/part/prt_1.json.tm": "not data",
	} {
		p = filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// walked runs Walk and returns the sessions' relative paths (with their
// parents' after a '<') and the paths of what was passed over.
func walked(t *testing.T, fsys vfs.FS, root string) (dirs []string, skipped []string) {
	t.Helper()
	for d, err := range agentuse.Walk(context.Background(), fsys, root) {
		if err != nil {
			var pe *fs.PathError
			if !errors.As(err, &pe) {
				t.Fatalf("walk: an error that names no path: %v", err)
			}
			skipped = append(skipped, pe.Path)
			continue
		}
		s := d.Rel
		if d.Parent != nil {
			s += " < " + d.Parent.Rel
		}
		if len(d.Entries) == 0 {
			t.Errorf("%s: no entries", d.Path)
		}
		dirs = append(dirs, s)
	}
	return dirs, skipped
}

// TestWalk: the one walk of AgentUse directories finds sessions at any
// depth below non-session directories (deeper than the viewer's old
// limit of six), nests subagents under their parent (a subagent of a
// subagent under the innermost one), leaves out .trash, follows no
// symbolic link (not even a loop back to the root, nor a subagent/ that
// is one) and reports an unreadable directory, naming it, and goes on.
func TestWalk(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "p1", "session", "01A-ag")
	walkFixture(t, a, "01A", "")
	sub := filepath.Join(a, "subagent", "01B-ag")
	walkFixture(t, sub, "01B", "01A")
	subsub := filepath.Join(sub, "subagent", "01C-ag")
	walkFixture(t, subsub, "01C", "01B")
	deep := filepath.Join(root, "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "01D-ag")
	walkFixture(t, deep, "01D", "")
	walkFixture(t, filepath.Join(root, "p1", "session", ".trash", "2026-01-01T00-00-00-000Z", "01T-ag"), "01T", "")
	walkFixture(t, filepath.Join(root, ".trash", "01U-ag"), "01U", "")
	// Symbolic links: a loop to the root, a link to a session, a
	// subagent/ that is a link, a session.json that is a link.
	for link, target := range map[string]string{
		filepath.Join(root, "p1", "loop"):              root,
		filepath.Join(root, "p1", "session", "01L"):    a,
		filepath.Join(root, "d1", "x", "session.json"): filepath.Join(a, "session.json"),
	} {
		if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	e := filepath.Join(root, "p2", "01E-ag")
	walkFixture(t, e, "01E", "")
	if err := os.Symlink(filepath.Join(a, "subagent"), filepath.Join(e, "subagent")); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(root, "p3")
	walkFixture(t, filepath.Join(locked, "01F-ag"), "01F", "")
	walkFixture(t, filepath.Join(root, "p4", "01G-ag"), "01G", "")

	fsys := vfstest.NewFaultFS(vfs.OS())
	fsys.Inject(vfstest.Fault{Op: vfstest.OpReadDir, Err: syscall.EACCES, Repeat: true, Match: func(p string) bool { return p == locked }})
	dirs, skipped := walked(t, fsys, root)
	want := []string{
		"d1/d2/d3/d4/d5/d6/d7/d8/01D-ag",
		"p1/session/01A-ag",
		"p1/session/01A-ag/subagent/01B-ag < p1/session/01A-ag",
		"p1/session/01A-ag/subagent/01B-ag/subagent/01C-ag < p1/session/01A-ag/subagent/01B-ag",
		"p2/01E-ag",
		"p4/01G-ag",
	}
	if diff := cmp.Diff(want, dirs); diff != "" {
		t.Errorf("sessions (-want +got):\n%s", diff)
	}
	wantSkipped := []string{filepath.Join(root, "d1", "x", "session.json"), filepath.Join(e, "subagent"), locked}
	if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
		t.Errorf("passed over (-want +got):\n%s", diff)
	}

	// Store.Sessions is the same walk: the same sessions, linked, and the
	// link in 01E's place reported in its Skipped.
	st, err := agentuse.OpenStore(context.Background(), agentuse.StoreOptions{Dir: root, FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var got []string
	for x, err := range st.Sessions(context.Background()) {
		if err != nil {
			continue
		}
		s := x.RelDir
		if x.Parent != nil {
			s += " < " + x.Parent.RelDir
		}
		got = append(got, s)
		switch x.ID {
		case "01A":
			if len(x.Children) != 1 || x.Children[0].ID != "01B" || len(x.Children[0].Children) != 1 || x.Children[0].Children[0].ID != "01C" {
				t.Errorf("01A's tree: %+v", x.Children)
			}
		case "01E":
			if len(x.Skipped) != 1 || !strings.Contains(x.Skipped[0].Error(), "symbolic link") {
				t.Errorf("01E's Skipped: %v", x.Skipped)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sessions (-want +got):\n%s", diff)
	}

	// A root that cannot be read ends the walk with its error; a missing
	// one yields nothing.
	fsys.Inject(vfstest.Fault{Op: vfstest.OpReadDir, Match: func(p string) bool { return p == root }})
	var last error
	for _, err := range agentuse.Walk(context.Background(), fsys, root) {
		last = err
	}
	if !errors.Is(last, syscall.EIO) {
		t.Errorf("walk of an unreadable root: %v", last)
	}
	for d, err := range agentuse.Walk(context.Background(), nil, filepath.Join(root, "none")) {
		t.Errorf("walk of a missing root: %v, %v", d, err)
	}
}

// TestWalkDeepChain: a chain of 40 subagents, each nested in the one
// before, is walked whole, each linked to the one before.
func TestWalkDeepChain(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("long paths")
	}
	root := t.TempDir()
	top := filepath.Join(root, "01A-ag")
	walkFixture(t, top, "01A", "")
	dir := top
	for i := range 40 {
		dir = filepath.Join(dir, "subagent", "01S"+strings.Repeat("s", 3)+"-"+string(rune('a'+i%26)))
		walkFixture(t, dir, "01S", "")
	}
	n := 0
	var parent *agentuse.Dir
	for d, err := range agentuse.Walk(context.Background(), nil, root) {
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 && d.Parent != parent {
			t.Fatalf("%s: parent %v, want the session before it", d.Rel, d.Parent)
		}
		parent = d
		n++
	}
	if n != 41 {
		t.Errorf("%d sessions, want 41", n)
	}
}

// TestDirFilesAndFingerprint: DirFiles lists a session's files (with the
// nested sessions' only when asked), links listed and not followed, and
// the fingerprint changes when a file's size, time or name does, and
// only then.
func TestDirFilesAndFingerprint(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "01A-ag")
	walkFixture(t, dir, "01A", "")
	walkFixture(t, filepath.Join(dir, "subagent", "01B-ag"), "01B", "01A")
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "msg_1", "part", "prt_2.json")); err != nil {
		t.Fatal(err)
	}
	files, skipped, err := agentuse.DirFiles(ctx, nil, dir, false)
	if err != nil || len(skipped) != 0 {
		t.Fatal(err, skipped)
	}
	var rels []string
	for _, f := range files {
		rels = append(rels, f.Rel)
		if f.Rel == "msg_1/part/prt_2.json" && f.Mode&fs.ModeSymlink == 0 {
			t.Errorf("the link is listed as %v", f.Mode)
		}
	}
	want := []string{"msg_1/artifact/out.txt", "msg_1/message.json", "msg_1/part/prt_1.json", "msg_1/part/prt_1.json.tm", "msg_1/part/prt_2.json", "session.json"}
	if diff := cmp.Diff(want, rels); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	all, _, err := agentuse.DirFiles(ctx, nil, dir, true)
	if err != nil || len(all) != len(files)+5 || all[len(all)-1].Rel != "subagent/01B-ag/session.json" {
		t.Errorf("with subagents: %v, %v", all, err)
	}

	size, print := agentuse.Fingerprint(files)
	size2, print2 := agentuse.Fingerprint(files)
	if size != size2 || print != print2 || print < 0 {
		t.Errorf("fingerprint not stable: %d %d / %d %d", size, print, size2, print2)
	}
	changed := append([]agentuse.DirFile(nil), files...)
	changed[1].ModTime++
	if _, p := agentuse.Fingerprint(changed); p == print {
		t.Error("a new time gives the same fingerprint")
	}
	changed[1] = files[1]
	changed[1].Rel += "x"
	if _, p := agentuse.Fingerprint(changed); p == print {
		t.Error("a new name gives the same fingerprint")
	}

	// A part directory that cannot be read is reported, naming it; the
	// session directory itself is an error.
	fsys := vfstest.NewFaultFS(vfs.OS())
	pdir := filepath.Join(dir, "msg_1", "part")
	fsys.Inject(vfstest.Fault{Op: vfstest.OpReadDir, Repeat: true, Match: func(p string) bool { return p == pdir }})
	files, skipped, err = agentuse.DirFiles(ctx, fsys, dir, false)
	var pe *fs.PathError
	if err != nil || len(skipped) != 1 || !errors.As(skipped[0], &pe) || pe.Path != pdir || len(files) != 3 {
		t.Errorf("an unreadable part directory: %v, %v, %v", files, skipped, err)
	}
	fsys.Inject(vfstest.Fault{Op: vfstest.OpReadDir, Match: func(p string) bool { return p == dir }})
	if _, _, err := agentuse.DirFiles(ctx, fsys, dir, false); !errors.Is(err, syscall.EIO) {
		t.Errorf("an unreadable session directory: %v", err)
	}
}

// TestWalkDirs: WalkDirs yields a directory whose session.json is a
// symbolic link or a named pipe as a session directory, with the error
// Walk passes it over for, and searches only its subagent/ below it;
// Walk still passes it over. The rest is Walk's.
func TestWalkDirs(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "p", "session", "01A-ag")
	walkFixture(t, a, "01A", "")
	piped := filepath.Join(root, "p", "session", "01P-ag")
	walkFixture(t, piped, "01P", "")
	walkFixture(t, filepath.Join(piped, "subagent", "01Q-ag"), "01Q", "01P")
	walkFixture(t, filepath.Join(piped, "msg_1", "01R-ag"), "01R", "") // not a subagent/: not searched
	pipe := filepath.Join(piped, "session.json")
	if err := os.Remove(pipe); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(pipe); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	linked := filepath.Join(root, "p", "session", "01S-ag")
	if err := os.MkdirAll(linked, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(linked, "session.json")
	if err := os.Symlink(filepath.Join(a, "session.json"), link); err != nil {
		t.Fatal(err)
	}

	var got []string
	for d, err := range agentuse.WalkDirs(context.Background(), nil, root) {
		s := "-"
		if d != nil {
			s = d.Rel
			if d.Parent != nil {
				s += " < " + d.Parent.Rel
			}
		}
		if err != nil {
			var pe *fs.PathError
			if !errors.As(err, &pe) {
				t.Fatalf("an error that names no path: %v", err)
			}
			s += " ! " + pe.Path
		}
		got = append(got, s)
	}
	want := []string{
		"p/session/01A-ag",
		"p/session/01P-ag ! " + pipe,
		"p/session/01P-ag/subagent/01Q-ag < p/session/01P-ag",
		"p/session/01S-ag ! " + link,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WalkDirs (-want +got):\n%s", diff)
	}

	dirs, skipped := walked(t, nil, root)
	if diff := cmp.Diff([]string{"p/session/01A-ag", "p/session/01P-ag/msg_1/01R-ag", "p/session/01P-ag/subagent/01Q-ag"}, dirs); diff != "" {
		t.Errorf("Walk's sessions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{pipe, link}, skipped); diff != "" {
		t.Errorf("Walk passed over (-want +got):\n%s", diff)
	}
}
