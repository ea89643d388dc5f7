package engine_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// An append that fails after writing part of its line (a disk that fills
// up, an I/O error, a short write) or whose sync fails leaves the file
// byte for byte as it was: the writer cuts off what it wrote, so pi's
// next append is not glued onto a fragment. The session still refuses
// writes until it is reopened, and a reopen finds no torn tail.
func TestFailedAppendLeavesTheFileAsItWas(t *testing.T) {
	t.Parallel()
	big := `{"role":"user","content":"` + strings.Repeat("z", 5000) + `"}`
	cases := []struct {
		name  string
		fault vfstest.Fault
		want  error
	}{
		{"disk full midway", vfstest.DiskFull(1), syscall.ENOSPC},
		{"I/O error midway", vfstest.Fault{Op: vfstest.OpWrite, Err: syscall.EIO, Written: 1234}, syscall.EIO},
		{"short write without an error", vfstest.Fault{Op: vfstest.OpWrite, Written: -1, Short: true}, io.ErrShortWrite},
		{"I/O error after a partial write, repeated", vfstest.Fault{Op: vfstest.OpWrite, Err: syscall.EIO, Written: -1, Repeat: true}, syscall.EIO},
		{"sync fails", vfstest.Fault{Op: vfstest.OpSync, Err: syscall.EIO}, syscall.EIO},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfs := vfstest.NewCrashFS()
			ffs := vfstest.NewFaultFS(cfs)
			opts := engine.WithoutLock(engine.StoreOptions{FS: ffs, Dir: "/store"})
			s, err := openStore(t, opts).Create(context.Background(), "/w", engine.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.AppendMessage(raw(`{"role":"assistant","content":"one"}`)); err != nil {
				t.Fatal(err)
			}
			file := s.SessionFile()
			before, err := cfs.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ffs.Inject(tc.fault)
			_, err = s.AppendMessage(raw(big))
			if !errors.Is(err, tc.want) {
				t.Fatalf("append: %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), "cut off") {
				t.Errorf("the error does not say the bytes were cut off: %v", err)
			}
			ffs.Clear()
			if after, _ := cfs.ReadFile(file); !bytes.Equal(after, before) {
				t.Fatalf("the file changed:\n%q\nwas\n%q", after, before)
			}
			if _, err := s.AppendMessage(raw(`{"role":"user","content":"after"}`)); !errors.Is(err, tc.want) {
				t.Fatalf("append after a failed one: %v, want the same sticky error", err)
			}
			s.Close()
			if after, _ := cfs.ReadFile(file); !bytes.Equal(after, before) {
				t.Fatalf("the file changed after the close:\n%q\nwas\n%q", after, before)
			}
			r, err := openStore(t, opts).Open(context.Background(), file, engine.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.AppendMessage(raw(`{"role":"user","content":"recovered"}`)); err != nil {
				t.Fatalf("append after reopen: %v", err)
			}
			if rec := r.Recovery(); rec.TornBytes != 0 {
				t.Errorf("a reopen found a torn tail: %+v", rec)
			}
		})
	}
}

// When another process (pi, which takes no lock) appends after the bytes
// a failed append left, those bytes are not the file's last any more:
// nothing is cut, so pi's line is kept, and the error says what was left.
func TestFailedAppendKeepsALineAppendedAfterIt(t *testing.T) {
	t.Parallel()
	cfs := vfstest.NewCrashFS()
	ffs := vfstest.NewFaultFS(cfs)
	opts := engine.WithoutLock(engine.StoreOptions{FS: ffs, Dir: "/store"})
	s, err := openStore(t, opts).Create(context.Background(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.AppendMessage(raw(`{"role":"assistant","content":"one"}`)); err != nil {
		t.Fatal(err)
	}
	file := s.SessionFile()
	piLine := `{"type":"message","id":"pi000001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"pi"}}` + "\n"
	var once sync.Once
	failed := false
	ffs.SetHook(func(op vfstest.Op, path string) error {
		// The first look at the file after the failed write: pi has
		// appended in between.
		if failed && op == vfstest.OpStat && path == file {
			once.Do(func() {
				f, err := cfs.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Error(err)
					return
				}
				f.Write([]byte(piLine))
				f.Close()
			})
		}
		if op == vfstest.OpWrite && path == file {
			failed = true // the hook runs before the write it sees
		}
		return nil
	})
	ffs.Inject(vfstest.Fault{Op: vfstest.OpWrite, Err: syscall.ENOSPC, Written: 100})
	_, err = s.AppendMessage(raw(`{"role":"user","content":"` + strings.Repeat("z", 5000) + `"}`))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append: %v, want ENOSPC", err)
	}
	if !strings.Contains(err.Error(), "another process appended after them") {
		t.Errorf("the error does not say why the bytes stayed: %v", err)
	}
	data, err := cfs.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(data), piLine) {
		t.Fatalf("pi's line is not at the end of the file any more:\n%q", data)
	}
}

// The bytes are cut on the real filesystem too (a descriptor with Seek).
func TestFailedAppendOnTheOSFilesystem(t *testing.T) {
	t.Parallel()
	ffs := vfstest.NewFaultFS(vfs.OS())
	opts := engine.WithoutLock(engine.StoreOptions{FS: ffs, Dir: t.TempDir()})
	s, err := openStore(t, opts).Create(context.Background(), "/w", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMessage(raw(`{"role":"assistant","content":"one"}`)); err != nil {
		t.Fatal(err)
	}
	file := s.SessionFile()
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ffs.Inject(vfstest.DiskFull(1))
	if _, err := s.AppendMessage(raw(`{"role":"user","content":"` + strings.Repeat("z", 5000) + `"}`)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append: %v, want ENOSPC", err)
	}
	s.Close()
	if after, _ := os.ReadFile(file); !bytes.Equal(after, before) {
		t.Fatalf("the file changed: %d bytes, were %d", len(after), len(before))
	}
}
