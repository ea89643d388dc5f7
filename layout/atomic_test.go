package layout_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/layout"
)

// TestWritesInNewDirectoriesSurviveACrash checks that a directory created
// on the way to a durable file is durable too: its entry lives in its
// parent, which must be synced.
func TestWritesInNewDirectoriesSurviveACrash(t *testing.T) {
	cases := []struct {
		name string
		do   func(t *testing.T, c *layout.CrashFS)
		want map[string]string
	}{
		{
			name: "MkdirAllSync of nested directories",
			do: func(t *testing.T, c *layout.CrashFS) {
				must(t, layout.MkdirAllSync(c, "/base/a/b", 0o700))
			},
			want: map[string]string{"base": "<dir>", "base/a": "<dir>", "base/a/b": "<dir>"},
		},
		{
			name: "MkdirAllSync of an existing directory",
			do: func(t *testing.T, c *layout.CrashFS) {
				must(t, layout.MkdirAllSync(c, "/base", 0o700))
			},
			want: map[string]string{"base": "<dir>"},
		},
		{
			name: "WriteFileAtomic into a new directory",
			do: func(t *testing.T, c *layout.CrashFS) {
				must(t, layout.WriteFileAtomic(c, "/base/sessions/s.jsonl", []byte("data\n"), layout.FileMode))
			},
			want: map[string]string{"base": "<dir>", "base/sessions": "<dir>", "base/sessions/s.jsonl": "data\n"},
		},
		{
			name: "WriteFileAtomic replacing a file",
			do: func(t *testing.T, c *layout.CrashFS) {
				must(t, layout.WriteFileAtomic(c, "/base/f", []byte("old"), layout.FileMode))
				must(t, layout.WriteFileAtomic(c, "/base/f", []byte("new"), layout.FileMode))
			},
			want: map[string]string{"base": "<dir>", "base/f": "new"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := layout.NewCrashFS()
			must(t, c.MkdirAll("/base", 0o700))
			must(t, c.SyncDir("/"))
			tc.do(t, c)
			if u := c.Unsynced(); len(u) != 0 {
				t.Errorf("left unsynced: %q", u)
			}
			if diff := cmp.Diff(tc.want, dump(t, c.CrashClone(nil), "/")); diff != "" {
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
	for _, n := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("sync %d fails", n), func(t *testing.T) {
			disk := layout.NewCrashFS()
			must(t, disk.MkdirAll("/base", 0o700))
			must(t, disk.SyncDir("/"))
			ffs := layout.NewFaultFS(disk)
			ffs.Inject(layout.Fault{Op: layout.OpSyncDir, N: n})
			if err := layout.MkdirAllSync(ffs, "/base/a/b/c", 0o700); !errors.Is(err, syscall.EIO) {
				t.Fatalf("first call: %v, want the injected EIO", err)
			}
			must(t, layout.MkdirAllSync(ffs, "/base/a/b/c", 0o700))
			want := map[string]string{"base": "<dir>", "base/a": "<dir>", "base/a/b": "<dir>", "base/a/b/c": "<dir>"}
			if diff := cmp.Diff(want, dump(t, disk.CrashClone(nil), "/")); diff != "" {
				t.Errorf("after a crash (-want +got):\n%s", diff)
			}
		})
	}
}
