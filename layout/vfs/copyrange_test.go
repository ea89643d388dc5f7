package vfs_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs"
)

// flipWrites is an OS file whose writes land with their first byte
// changed: a copy that goes wrong below the program.
type flipWrites struct{ vfs.File }

func (f flipWrites) Write(p []byte) (int, error) {
	q := bytes.Clone(p)
	if len(q) > 0 {
		q[0] ^= 1
	}
	return f.File.Write(q)
}

func TestCopyRange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srcData := bytes.Repeat([]byte("0123456789abcdef\n"), 100000)
	srcPath := filepath.Join(dir, "src")
	if err := os.WriteFile(srcPath, srcData, 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := vfs.OS().OpenFile(srcPath, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, tc := range []struct {
		name string
		wrap func(*os.File) vfs.File
		want error
	}{
		{"kernel", func(f *os.File) vfs.File { return f }, nil},
		{"buffer", func(f *os.File) vfs.File { return struct{ vfs.File }{f} }, nil},
		{"a copy that goes wrong", func(f *os.File) vfs.File { return flipWrites{f} }, vfs.ErrCopyMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.OpenFile(filepath.Join(t.TempDir(), "dst"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString("head\n"); err != nil {
				t.Fatal(err)
			}
			off, n := int64(17*3), int64(17*50000)
			got, err := vfs.CopyRange(tc.wrap(f), 5, src, off, n)
			if !errors.Is(err, tc.want) {
				t.Fatalf("CopyRange: %v, want %v", err, tc.want)
			}
			if tc.want != nil {
				return
			}
			if got != n {
				t.Errorf("copied %d, want %d", got, n)
			}
			if _, err := f.WriteString("tail\n"); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(f.Name())
			if err != nil {
				t.Fatal(err)
			}
			want := append(append([]byte("head\n"), srcData[off:off+n]...), "tail\n"...)
			if !bytes.Equal(data, want) {
				t.Errorf("the copy holds %d bytes, not the %d expected (or others)", len(data), len(want))
			}
		})
	}
}
