package search

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// TestWalkFaults: the search walk goes through the filesystem it is
// given, both formats: an AgentUse project directory that cannot be read
// is reported, naming it, and the other project's session is still
// indexed; a .trash directory is left out; an AgentUse root that cannot
// be read, and a JSONL store whose files cannot be listed, are errors.
func TestWalkFaults(t *testing.T) {
	root := t.TempDir()
	write := func(p, data string) { t.Helper(); writeFileAll(t, p, data) }
	session := func(dir string) {
		write(filepath.Join(dir, "session.json"), `{"id":"01A","agent":{"id":"ag","name":"ag"}}`)
		write(filepath.Join(dir, "msg_1", "message.json"), `{"id":"msg_1"}`)
		write(filepath.Join(dir, "msg_1", "part", "prt_1.json"), `{"id":"prt_1","type":"text","text":"x"}`)
	}
	good := filepath.Join(root, "p1", "session", "01A-ag")
	session(good)
	bad := filepath.Join(root, "p2")
	session(filepath.Join(bad, "session", "01B-ag"))
	session(filepath.Join(root, "p1", "session", ".trash", "t", "01C-ag"))
	jsonlDir := filepath.Join(t.TempDir(), "sessions")
	write(filepath.Join(jsonlDir, "--w--", "a.jsonl"), `{"type":"session","version":3,"id":"a","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`+"\n")

	fsys := vfstest.NewFaultFS(vfs.OS())
	fsys.Inject(vfstest.Fault{Op: vfstest.OpReadDir, Err: syscall.EACCES, Repeat: true, Match: func(p string) bool { return p == bad }})
	var warns []error
	got, err := walkFS(context.Background(), fsys, []layout.Place{{Format: layout.FormatAgentUse, Root: root}, {Format: layout.FormatJSONL, Root: jsonlDir}}, func(err error) { warns = append(warns, err) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range got {
		paths = append(paths, f.path)
	}
	want := []string{filepath.Join(good, "session.json"), filepath.Join(good, "msg_1", "message.json"),
		filepath.Join(good, "msg_1", "part", "prt_1.json"), filepath.Join(jsonlDir, "--w--", "a.jsonl")}
	if len(paths) != len(want) {
		t.Fatalf("files %v, want %v", paths, want)
	}
	for i := range want {
		if paths[i] != want[i] {
			t.Errorf("file %d: %s, want %s", i, paths[i], want[i])
		}
	}
	var pe *fs.PathError
	if len(warns) != 1 || !errors.As(warns[0], &pe) || pe.Path != bad || !errors.Is(warns[0], syscall.EACCES) {
		t.Errorf("warnings %v, want one naming %s", warns, bad)
	}
	if fsys.Calls(vfstest.OpReadDir) == 0 || fsys.Calls(vfstest.OpStat) == 0 {
		t.Error("the walk did not go through the given filesystem")
	}

	fsys.Clear()
	fsys.Inject(vfstest.Fault{Op: vfstest.OpReadDir, Match: func(p string) bool { return p == root }})
	if _, err := walkFS(context.Background(), fsys, []layout.Place{{Format: layout.FormatAgentUse, Root: root}}, func(error) {}, nil); !errors.Is(err, syscall.EIO) {
		t.Errorf("an unreadable AgentUse root: %v", err)
	}
	fsys.Inject(vfstest.Fault{Op: vfstest.OpReadDir, Match: func(p string) bool { return p == jsonlDir }})
	if _, err := walkFS(context.Background(), fsys, []layout.Place{{Format: layout.FormatJSONL, Root: jsonlDir}}, func(error) {}, nil); !errors.Is(err, syscall.EIO) {
		t.Errorf("an unreadable JSONL store: %v", err)
	}
}

// TestWalkListsOnce: a directory given as a store of both formats (a
// --store DIR) has each of its directories listed once, not once by each
// format's walk, and both formats' sessions are found.
func TestWalkListsOnce(t *testing.T) {
	root := t.TempDir()
	write := func(p, data string) { t.Helper(); writeFileAll(t, p, data) }
	for _, cwd := range []string{"--a--", "--b--"} {
		write(filepath.Join(root, cwd, "s.jsonl"), `{"type":"session","version":3,"id":"`+cwd+`","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`+"\n")
	}
	au := filepath.Join(root, "p1", "session", "01A-ag")
	write(filepath.Join(au, "session.json"), `{"id":"01A","agent":{"id":"ag","name":"ag"}}`)
	write(filepath.Join(au, "msg_1", "message.json"), `{"id":"msg_1"}`)
	ps, err := layout.ResolvePlacesFrom(root, func(string) string { return "" }, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2} {
		fsys := vfstest.NewFaultFS(vfs.OS())
		listed := map[string]int{}
		fsys.Inject(vfstest.Fault{Op: vfstest.OpReadDir, Repeat: true, Match: func(p string) bool { listed[p]++; return false }})
		got, err := walkFS(context.Background(), fsys, ps[:n], func(err error) { t.Errorf("warned: %v", err) }, nil)
		if err != nil {
			t.Fatal(err)
		}
		for d, k := range listed {
			if k != 1 {
				t.Errorf("%d stores: %s listed %d times", n, d, k)
			}
		}
		if want := []int{2, 4}[n-1]; len(got) != want {
			t.Errorf("%d stores: %d files found, want %d", n, len(got), want)
		}
	}
}

// writeFileAll writes data to p, making its directories.
func writeFileAll(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
