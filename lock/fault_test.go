package lock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// TestAcquireFaults fails the owner record's write and rename through
// Options.FS, with flock and in fallback mode: Acquire fails with an
// error naming the lock, leaves no temporary or fallback file and no
// lock held, and takes the lock once the disk is well.
func TestAcquireFaults(t *testing.T) {
	t.Parallel()
	for _, noFlock := range []bool{false, true} {
		for _, op := range []vfstest.Op{vfstest.OpWrite, vfstest.OpSync, vfstest.OpRename} {
			if noFlock && op == vfstest.OpRename {
				continue // the fallback file is written in place
			}
			name := op.String()
			if noFlock {
				name += " fallback"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				path := filepath.Join(dir, "s.jsonl.lock")
				ffs := vfstest.NewFaultFS(vfs.OS())
				ffs.Inject(vfstest.Fault{Op: op, Err: syscall.ENOSPC})
				opts := Options{FS: ffs, NoFlock: noFlock}
				_, err := Acquire(context.Background(), path, opts)
				if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) {
					t.Fatalf("Acquire with a failing %s: %v, want ENOSPC naming %s", op, err, path)
				}
				if ffs.Injected() != 1 {
					t.Fatalf("the fault was not reached (%d injected)", ffs.Injected())
				}
				ents, _ := os.ReadDir(dir)
				for _, e := range ents {
					if e.Name() != "s.jsonl.lock" {
						t.Errorf("left beside the lock: %s", e.Name())
					}
				}
				l, err := Acquire(context.Background(), path, opts)
				if err != nil {
					t.Fatalf("Acquire once the disk is well: %v", err)
				}
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
