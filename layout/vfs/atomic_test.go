package vfs_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// TestWritesInNewDirectoriesSurviveACrash checks that a directory created
// on the way to a durable file is durable too: its entry lives in its
// parent, which must be synced.
func TestWritesInNewDirectoriesSurviveACrash(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		do   func(t *testing.T, c *vfstest.CrashFS)
		want map[string]string
	}{
		{
			name: "MkdirAllSync of nested directories",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				must(t, vfs.MkdirAllSync(c, "/base/a/b", 0o700))
			},
			want: map[string]string{"base": "<dir>", "base/a": "<dir>", "base/a/b": "<dir>"},
		},
		{
			name: "MkdirAllSync of an existing directory",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				must(t, vfs.MkdirAllSync(c, "/base", 0o700))
			},
			want: map[string]string{"base": "<dir>"},
		},
		{
			name: "WriteFileAtomic into a new directory",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				must(t, vfs.WriteFileAtomic(c, "/base/sessions/s.jsonl", []byte("data\n"), vfs.FileMode))
			},
			want: map[string]string{"base": "<dir>", "base/sessions": "<dir>", "base/sessions/s.jsonl": "data\n"},
		},
		{
			name: "WriteFileAtomic replacing a file",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				must(t, vfs.WriteFileAtomic(c, "/base/f", []byte("old"), vfs.FileMode))
				must(t, vfs.WriteFileAtomic(c, "/base/f", []byte("new"), vfs.FileMode))
			},
			want: map[string]string{"base": "<dir>", "base/f": "new"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := vfstest.NewCrashFS()
			must(t, c.MkdirAll("/base", 0o700))
			must(t, c.SyncDir("/"))
			tc.do(t, c)
			if u := c.Unsynced(); len(u) != 0 {
				t.Errorf("left unsynced: %q", u)
			}
			got, err := vfstest.Dump(c.CrashClone(nil), "/")
			must(t, err)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("after a crash (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMkdirAllSyncRetryAfterFailure fails the directory sync of a
// MkdirAllSync and calls it again. The first call must not leave
// directories behind whose names are not durable, or the second would
// find them and sync nothing.
func TestMkdirAllSyncRetryAfterFailure(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("sync %d fails", n), func(t *testing.T) {
			t.Parallel()
			disk := vfstest.NewCrashFS()
			must(t, disk.MkdirAll("/base", 0o700))
			must(t, disk.SyncDir("/"))
			ffs := vfstest.NewFaultFS(disk)
			ffs.Inject(vfstest.Fault{Op: vfstest.OpSyncDir, N: n})
			if err := vfs.MkdirAllSync(ffs, "/base/a/b/c", 0o700); !errors.Is(err, syscall.EIO) {
				t.Fatalf("first call: %v, want the injected EIO", err)
			}
			must(t, vfs.MkdirAllSync(ffs, "/base/a/b/c", 0o700))
			want := map[string]string{"base": "<dir>", "base/a": "<dir>", "base/a/b": "<dir>", "base/a/b/c": "<dir>"}
			got, err := vfstest.Dump(disk.CrashClone(nil), "/")
			must(t, err)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("after a crash (-want +got):\n%s", diff)
			}
		})
	}
}
