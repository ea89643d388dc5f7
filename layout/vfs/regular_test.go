//go:build unix

package vfs_test

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessctl/sessctl/layout/vfs"
)

// within runs fn and fails the test if it has not returned after a minute:
// a regression that blocks on a named pipe fails instead of hanging the
// test binary. The bound only catches a hang; nothing is timed.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s still blocked after a minute", what)
	}
}

// TestOpenRegularRefusesSpecialFiles opens a named pipe without a writer,
// a socket, a device, a directory and a symbolic link to a named pipe through every
// read path of the real filesystem: each is refused at once with an error
// naming the file, and a regular file still reads.
func TestOpenRegularRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir.jsonl")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(reg, []byte("line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A socket cannot be opened at all (ENXIO): it is reported as not a
	// regular file too.
	sock := filepath.Join(dir, "sock.jsonl")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fsys := vfs.OS()
	readers := []struct {
		name string
		read func(path string) ([]byte, error)
	}{
		{"OpenRegular", func(p string) ([]byte, error) {
			f, err := vfs.OpenRegular(p)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return io.ReadAll(f)
		}},
		{"ReadRegular", vfs.ReadRegular},
		{"ReadFile", func(p string) ([]byte, error) { return vfs.ReadFile(fsys, p) }},
		{"FS.ReadFile", fsys.ReadFile},
		{"FS.OpenFile", func(p string) ([]byte, error) {
			f, err := fsys.OpenFile(p, os.O_RDONLY, 0)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return io.ReadAll(f)
		}},
		{"ReadInto", func(p string) ([]byte, error) {
			data, _, _, err := vfs.ReadInto(fsys, p, nil)
			return data, err
		}},
	}
	cases := []struct {
		path string
		want error
	}{
		{fifo, vfs.ErrNotRegular},
		{sock, vfs.ErrNotRegular},
		{link, vfs.ErrNotRegular},
		{"/dev/null", vfs.ErrNotRegular},
		{sub, syscall.EISDIR},
	}
	for _, r := range readers {
		for _, c := range cases {
			var err error
			within(t, r.name+" of "+c.path, func() { _, err = r.read(c.path) })
			var pe *fs.PathError
			if !errors.Is(err, c.want) || !errors.As(err, &pe) || pe.Path != c.path {
				t.Errorf("%s(%s): %v, want a *PathError naming the file that is %v", r.name, c.path, err, c.want)
			}
		}
		got, err := r.read(reg)
		if err != nil || string(got) != "line\n" {
			t.Errorf("%s of a regular file: %q, %v", r.name, got, err)
		}
	}
	if _, err := vfs.ReadRegular(fifo); !strings.Contains(err.Error(), "pipe.jsonl: not a regular file") {
		t.Errorf("message %q does not say what is wrong with which file", err)
	}
}
