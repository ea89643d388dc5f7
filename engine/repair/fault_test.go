package repair_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/engine/repair"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// TestFileFaults fails the read of a damaged session, and the write,
// sync and link of its repaired copy, through Options.FS: each gives an
// error naming the original, the original keeps its bytes and no output
// (nor temporary file) is left; with the disk well again it is repaired.
func TestFileFaults(t *testing.T) {
	t.Parallel()
	data := lines(vEntry("a", ""), vHeader, vEntry("b", "a"))
	for _, op := range []vfstest.Op{vfstest.OpRead, vfstest.OpWrite, vfstest.OpSync, vfstest.OpLink} {
		t.Run(op.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "broken.jsonl")
			if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "fixed.jsonl")
			ffs := vfstest.NewFaultFS(vfs.OS())
			ffs.Inject(vfstest.Fault{Op: op, Err: syscall.EIO})
			_, err := repair.File(path, repair.Options{Output: out, FS: ffs})
			if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), path) {
				t.Errorf("repair with a failing %s: %v, want EIO naming %s", op, err, path)
			}
			if ffs.Injected() != 1 {
				t.Fatalf("the fault was not reached (%d injected)", ffs.Injected())
			}
			if b, _ := os.ReadFile(path); string(b) != data {
				t.Errorf("the original changed: %q", b)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("left in the directory: %v", ents)
			}
			if _, err := repair.File(path, repair.Options{Output: out, FS: ffs}); err != nil {
				t.Errorf("repair once the disk is well: %v", err)
			}
		})
	}
}
