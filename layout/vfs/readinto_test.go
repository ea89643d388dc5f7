package vfs_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// TestReadInto reads files of several sizes through one reused buffer, on
// the real filesystem and on a FS of another kind, and checks the bytes,
// the size and the modification time against what Stat says.
func TestReadInto(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mtime := time.Date(2026, 3, 4, 5, 6, 7, 891011100, time.UTC) // in 100 ns, which Windows keeps
	mem := vfstest.NewCrashFS()
	if err := mem.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sizes := []int{0, 1, 4095, 4096, 5000, 70000, 3} // grows the buffer, then reuses it
	for _, fsys := range []struct {
		name string
		fs   vfs.FS
	}{{"os", vfs.OS()}, {"crashfs", mem}} {
		var buf []byte
		for i, n := range sizes {
			data := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
			p := filepath.Join(dir, fsys.name+"-"+string(rune('a'+i)))
			if err := vfs.WriteFileAtomicNoSync(fsys.fs, p, data, vfs.FileMode); err != nil {
				t.Fatal(err)
			}
			if fsys.name == "os" {
				if err := os.Chtimes(p, mtime, mtime); err != nil {
					t.Fatal(err)
				}
			}
			st, err := fsys.fs.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			var size int64
			var mt time.Time
			buf, size, mt, err = vfs.ReadInto(fsys.fs, p, buf)
			if err != nil {
				t.Fatalf("%s: ReadInto(%d bytes): %v", fsys.name, n, err)
			}
			if !bytes.Equal(buf, data) || size != int64(n) || !mt.Equal(st.ModTime()) {
				t.Errorf("%s: ReadInto(%d bytes) = %d bytes, size %d, mtime %v; want the file's bytes, %d, %v",
					fsys.name, n, len(buf), size, mt, n, st.ModTime())
			}
			if fsys.name == "os" && !mt.Equal(mtime) {
				t.Errorf("mtime %v, want %v", mt, mtime)
			}
		}
	}
	if _, _, _, err := vfs.ReadInto(vfs.OS(), filepath.Join(dir, "missing"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadInto of a missing file: %v, want ErrNotExist", err)
	}
}
