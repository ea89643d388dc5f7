//go:build unix

package engine_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/sessctl/sessctl/engine"
)

// sessionBytes is a small valid session whose first message is text.
func sessionBytes(id, text string) []byte {
	return []byte(`{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}` + "\n" +
		`{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"` + text + `","timestamp":1}}` + "\n")
}

// writeOld writes data to path with a modification time an hour ago, so
// that the list index may cache it.
func writeOld(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// oldSymlink makes a symbolic link whose own times are an hour old, so
// that the list index could cache it.
func oldSymlink(t *testing.T, target, link string) {
	t.Helper()
	listMust(t, os.Symlink(target, link))
	old := unix.NsecToTimeval(time.Now().Add(-time.Hour).UnixNano())
	listMust(t, unix.Lutimes(link, []unix.Timeval{old, old}))
}

// listed lists dir (twice with the index, to use what the first wrote)
// and returns the first messages listed and the warnings, as strings.
func listed(t *testing.T, list func(o engine.ListOptions) ([]engine.Info, error)) (msgs, warns []string) {
	t.Helper()
	infos, err := list(engine.ListOptions{Warn: func(err error) { warns = append(warns, err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		msgs = append(msgs, in.FirstMessage)
	}
	return msgs, warns
}

// TestListWarnsAboutUnreadableFiles: files named like sessions that cannot
// be read are left out and reported one by one, naming the file and the
// cause; the others are listed; the list index does not remember a
// failure, so a file that becomes readable is listed at once.
func TestListWarnsAboutUnreadableFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeOld(t, filepath.Join(dir, "good.jsonl"), sessionBytes("g", "good"))
	writeOld(t, filepath.Join(dir, "notsession.jsonl"), []byte("{\"type\":\"message\"}\n"))
	oldSymlink(t, "missing-target", filepath.Join(dir, "dangling.jsonl"))
	oldSymlink(t, "loop.jsonl", filepath.Join(dir, "loop.jsonl"))
	listMust(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	oldSymlink(t, "sub", filepath.Join(dir, "todir.jsonl"))
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	oldSymlink(t, "pipe.jsonl", filepath.Join(dir, "topipe.jsonl"))

	list := func(o engine.ListOptions) ([]engine.Info, error) {
		o.EveryCwd = true
		return openStore(t, engine.StoreOptions{Dir: dir}).List(context.Background(), "/", o)
	}
	wantWarns := []string{
		"open " + filepath.Join(dir, "dangling.jsonl") + ": no such file or directory",
		"open " + filepath.Join(dir, "loop.jsonl") + ": too many levels of symbolic links",
		"open " + filepath.Join(dir, "todir.jsonl") + ": is a directory",
		"open " + filepath.Join(dir, "topipe.jsonl") + ": not a regular file",
		"open " + filepath.Join(dir, "pipe.jsonl") + ": not a regular file",
	}
	for round := range 2 { // the second is served from the index
		msgs, warns := listed(t, list)
		if diff := cmp.Diff([]string{"good"}, msgs); diff != "" {
			t.Errorf("round %d: listed (-want +got):\n%s", round, diff)
		}
		if diff := cmp.Diff(wantWarns, warns); diff != "" {
			t.Errorf("round %d: warnings (-want +got):\n%s", round, diff)
		}
	}
	// The dangling link's target appears, older than the index: it is
	// listed (the failure was not cached).
	writeOld(t, filepath.Join(dir, "missing-target"), sessionBytes("m", "found later"))
	msgs, _ := listed(t, list)
	if diff := cmp.Diff([]string{"good", "found later"}, msgs, sortStrings); diff != "" {
		t.Errorf("after the target appeared (-want +got):\n%s", diff)
	}
}

// sortStrings compares lists of strings as sets (listing order follows
// modification times, equal here).
var sortStrings = cmp.Transformer("sort", func(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
})

// TestListFollowsSymlinkedSessions: a session reached through a symbolic
// link is read each time, so a change of its target is seen even when the
// link itself (whose times the index would key on) did not change.
func TestListFollowsSymlinkedSessions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "real.jsonl")
	writeOld(t, target, sessionBytes("r", "before"))
	oldSymlink(t, target, filepath.Join(dir, "link.jsonl"))
	list := func(o engine.ListOptions) ([]engine.Info, error) {
		o.EveryCwd = true
		return openStore(t, engine.StoreOptions{Dir: dir}).List(context.Background(), "/", o)
	}
	if msgs, _ := listed(t, list); len(msgs) != 1 || msgs[0] != "before" {
		t.Fatalf("listed %q", msgs)
	}
	writeOld(t, target, sessionBytes("r", "after!"))
	if msgs, _ := listed(t, list); len(msgs) != 1 || msgs[0] != "after!" {
		t.Errorf("after the target changed, listed %q, want [after!]", msgs)
	}
}

// TestListTree lists a store laid out in nested directories, leaving out
// .trash and directories reached through symbolic links, and reports an
// unreadable directory; a missing root is not found.
func TestListTree(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for path, text := range map[string]string{
		"a.jsonl":                 "top",
		"p/b.jsonl":               "project",
		"p/q/c.jsonl":             "deeper",
		".trash/2026/p/d.jsonl":   "deleted",
		"elsewhere/e.jsonl":       "linked dir",
		"p/q/not-a-session.jsonl": "",
	} {
		p := filepath.Join(root, path)
		listMust(t, os.MkdirAll(filepath.Dir(p), 0o700))
		data := sessionBytes(filepath.Base(path), text)
		if text == "" {
			data = []byte("not json\n")
		}
		writeOld(t, p, data)
	}
	listMust(t, os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(root, "p", "link")))
	// The linked directory is only reachable through the link: move the
	// real one out of the tree.
	out := filepath.Join(t.TempDir(), "elsewhere")
	listMust(t, os.Rename(filepath.Join(root, "elsewhere"), out))
	listMust(t, os.Remove(filepath.Join(root, "p", "link")))
	listMust(t, os.Symlink(out, filepath.Join(root, "p", "link")))

	list := func(o engine.ListOptions) ([]engine.Info, error) {
		return openStore(t, engine.StoreOptions{Dir: root}).List(context.Background(), "", o)
	}
	msgs, warns := listed(t, list)
	if diff := cmp.Diff([]string{"top", "project", "deeper"}, msgs, sortStrings); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
	_, err := openStore(t, engine.StoreOptions{Dir: filepath.Join(root, "nope")}).List(context.Background(), "", engine.ListOptions{})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), filepath.Join(root, "nope")) {
		t.Errorf("missing root: %v, want not-exist naming it", err)
	}
	_, err = openStore(t, engine.StoreOptions{Dir: filepath.Join(root, "a.jsonl")}).List(context.Background(), "", engine.ListOptions{})
	if !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("a file as root: %v, want ENOTDIR", err)
	}
}

func listMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
