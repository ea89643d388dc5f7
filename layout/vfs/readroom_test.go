package vfs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// ReadFileRoom reads the whole file, shows room its head and size, and
// leaves that much capacity after the bytes, on the real filesystem (small
// and large files, the latter read in parallel) and on others.
func TestReadFileRoom(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, size := range []int{0, 10, 5000, 9 << 20} {
		data := bytes.Repeat([]byte("0123456789abcde\n"), size/16+1)[:size]
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, fsys := range []vfs.FS{vfs.OS(), vfstest.NewFaultFS(vfs.OS())} {
			var head []byte
			gotSize := int64(-1)
			got, err := vfs.ReadFileRoom(fsys, p, func(h []byte, n int64) int {
				head, gotSize = append([]byte(nil), h...), n
				return 1000
			})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("%d bytes: read %d bytes, not the file", size, len(got))
			}
			if size > 0 && (gotSize != int64(size) || !bytes.Equal(head, data[:min(size, 4096)])) {
				t.Errorf("%d bytes: room was shown %d bytes of head and size %d", size, len(head), gotSize)
			}
			if size > 0 && cap(got)-len(got) < 1000 {
				t.Errorf("%d bytes: room %d, want 1000", size, cap(got)-len(got))
			}
		}
	}
}
