//go:build unix

package vfs_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout/vfs"
)

// owner returns the uid and gid of path.
func owner(t *testing.T, path string) (uint32, uint32) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid
}

// noTemps fails when a temporary file of an atomic write is left in dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if vfs.IsTempName(e.Name()) {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestWriteFileAtomicKeepsAttrs: a rewrite keeps the original's mode,
// owner and group, whatever the umask and the process's own group; a
// file without any write bit is refused, even for root, and left as it
// was.
func TestWriteFileAtomicKeepsAttrs(t *testing.T) {
	t.Parallel()
	root := os.Geteuid() == 0
	otherGid := -1 // a group the process is not running as
	if root {
		otherGid = 1
	}
	cases := []struct {
		name string
		mode fs.FileMode
		gid  int // -1: the process's
		want error
	}{
		{"0600", 0o600, -1, nil},
		{"0640 of another group", 0o640, otherGid, nil},
		{"0644", 0o644, -1, nil},
		{"0664 of another group", 0o664, otherGid, nil},
		{"0200 write only", 0o200, -1, nil},
		{"0444", 0o444, -1, vfs.ErrReadOnly},
		{"0400", 0o400, -1, vfs.ErrReadOnly},
		{"0440 of another group", 0o440, otherGid, vfs.ErrReadOnly},
	}
	writers := []struct {
		name  string
		write func(vfs.FS, string, []byte, fs.FileMode) error
	}{
		{"WriteFileAtomic", vfs.WriteFileAtomic},
		{"WriteFileAtomicNoSync", vfs.WriteFileAtomicNoSync},
	}
	for _, w := range writers {
		for _, c := range cases {
			t.Run(w.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				keepsAttrs(t, w.write, c.mode, c.gid, c.want)
			})
		}
	}
}

// keepsAttrs rewrites a file of the given mode (and group, unless -1)
// with write and checks the outcome: wantErr, or the new content with the
// same mode, owner and group.
func keepsAttrs(t *testing.T, write func(vfs.FS, string, []byte, fs.FileMode) error, mode fs.FileMode, gid int, wantErr error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if gid >= 0 {
		must(t, os.Chown(path, -1, gid))
	}
	must(t, os.Chmod(path, mode))
	uid0, gid0 := owner(t, path)
	err := write(vfs.OS(), path, []byte("new\n"), vfs.FileMode)
	if !errors.Is(err, wantErr) || wantErr != nil && !strings.Contains(err.Error(), path) {
		t.Fatalf("write: %v, want %v naming the file", err, wantErr)
	}
	want := "new\n"
	if wantErr != nil {
		want = "old\n"
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != mode {
		t.Errorf("mode %v, want %v", got, mode)
	}
	if u, g := owner(t, path); u != uid0 || g != gid0 {
		t.Errorf("owner %d:%d, want %d:%d", u, g, uid0, gid0)
	}
	must(t, os.Chmod(path, 0o600)) // to read it
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Errorf("content %q, want %q", got, want)
	}
	noTemps(t, dir)
}

// TestCheckReplaceRefuses covers what may not be replaced besides
// read-only files: links, special files and directories.
func TestCheckReplaceRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(reg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir.jsonl")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]error{
		link: vfs.ErrSymlink, fifo: vfs.ErrNotRegular, sub: syscall.EISDIR,
	} {
		if _, err := vfs.CheckReplace(vfs.OS(), path); !errors.Is(err, want) {
			t.Errorf("CheckReplace(%s): %v, want %v", path, err, want)
		}
	}
	if fi, err := vfs.CheckReplace(vfs.OS(), filepath.Join(dir, "new.jsonl")); fi != nil || err != nil {
		t.Errorf("CheckReplace of a new file: %v, %v; want nil, nil", fi, err)
	}
}

// TestWriteFileAtomicAsAnotherUser runs the rewrite as an ordinary user
// (nobody), as most people run sessctl: it may not rewrite a file it
// could not write, nor one whose owner or group it could not keep; it
// rewrites its own files keeping their mode. Needs root to switch users.
func TestWriteFileAtomicAsAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a helper as another user")
	}
	const uid, gid = 65534, 65534
	// The test binary and the files must be reachable by that user.
	base, err := os.MkdirTemp("", "sessctl-asuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	must(t, os.Chmod(base, 0o755))
	bin := testenv.CopyBinary(t, base)
	dir := filepath.Join(base, "store")
	must(t, os.Mkdir(dir, 0o777))
	must(t, os.Chmod(dir, 0o777))
	files := []struct {
		name       string
		mode       fs.FileMode
		uid, gid   int
		wantResult string // "ok" or the error kind the helper reports
	}{
		{"theirs-0644", 0o644, 0, 0, "permission"},
		{"theirs-0666", 0o666, 0, 0, "owner"},
		{"mine-other-group-0664", 0o664, uid, 0, "owner"},
		{"mine-0640", 0o640, uid, gid, "ok"},
		{"mine-0444", 0o444, uid, gid, "readonly"},
	}
	var names []string
	for _, f := range files {
		p := filepath.Join(dir, f.name+".jsonl")
		must(t, os.WriteFile(p, []byte("old\n"), 0o600))
		must(t, os.Chown(p, f.uid, f.gid))
		must(t, os.Chmod(p, f.mode))
		names = append(names, f.name)
	}
	cmd := testenv.CommandAt(bin, "rewrite-all", dir)
	cmd.Dir = base
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper as uid %d: %v\n%s", uid, err, out)
	}
	if n := strings.Count(string(out), "RESULT "); n != len(names) {
		t.Errorf("the helper reported %d files, want %d (%v):\n%s", n, len(names), names, out)
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name+".jsonl")
		want := fmt.Sprintf("RESULT %s %s", f.name, f.wantResult)
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("no %q in the helper's output:\n%s", want, out)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode().Perm() != f.mode || int(st.Uid) != f.uid || int(st.Gid) != f.gid {
			t.Errorf("%s: now %v %d:%d, want %v %d:%d", f.name, fi.Mode().Perm(), st.Uid, st.Gid, f.mode, f.uid, f.gid)
		}
		content, _ := os.ReadFile(p)
		if want := map[bool]string{true: "new\n", false: "old\n"}[f.wantResult == "ok"]; string(content) != want {
			t.Errorf("%s: content %q, want %q", f.name, content, want)
		}
	}
	noTemps(t, dir)
}

// rewriteAll is the child TestWriteFileAtomicAsAnotherUser starts as
// another user (see main_test.go): it rewrites every file in the directory
// named by its argument and prints one RESULT line per file.
func rewriteAll() int {
	dir := os.Args[1]
	ents, err := os.ReadDir(dir)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	for _, e := range ents {
		name := strings.TrimSuffix(e.Name(), ".jsonl")
		err := vfs.WriteFileAtomic(vfs.OS(), filepath.Join(dir, e.Name()), []byte("new\n"), vfs.FileMode)
		kind := "ok"
		switch {
		case err == nil:
		case errors.Is(err, vfs.ErrReadOnly):
			kind = "readonly"
		case strings.Contains(err.Error(), "keep its owner and group") && errors.Is(err, fs.ErrPermission):
			kind = "owner"
		case errors.Is(err, fs.ErrPermission):
			kind = "permission"
		default:
			kind = "other: " + err.Error()
		}
		fmt.Printf("RESULT %s %s\n", name, kind)
		if err != nil {
			fmt.Printf("  %v\n", err)
		}
	}
	fmt.Println("uid", strconv.Itoa(os.Geteuid()))
	return 0
}
