package lock

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/layout/vfs"
)

// snapshot records the names, sizes and modification times in dir, to show
// that Inspect writes nothing.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
	}
	return out
}

func TestInspect(t *testing.T) {
	t.Parallel()
	me := currentSelf()
	since := fixedNow.Add(-time.Hour)
	tests := []struct {
		name      string
		setup     func(t *testing.T, path string) *Owner // returns the owner Inspect should report
		linuxOnly bool
		want      Status
		freeAfter bool // Acquire must succeed right after Inspect
	}{
		{name: "no lock file", setup: func(*testing.T, string) *Owner { return nil },
			want: Status{}, freeAfter: true},
		{name: "released", setup: func(t *testing.T, path string) *Owner {
			mustAcquire(t, path, Options{}).Close()
			return nil
		}, want: Status{}, freeAfter: true},
		{name: "held by this process", setup: func(t *testing.T, path string) *Owner {
			o := mustAcquire(t, path, Options{}).Owner()
			return &o
		}, want: Status{Locked: true, Reason: "held by this process"}},
		{name: "held by another process", setup: func(t *testing.T, path string) *Owner {
			h := startHelper(t, "hold", pathEnv(path), noFlockEnv(false))
			rec, err := readRecord(vfs.OS(), OwnerPath(path))
			if err != nil || rec.Owner == nil || rec.Owner.PID != h.pid() {
				t.Fatalf("helper's record = %+v, %v", rec.Owner, err)
			}
			return rec.Owner
		}, want: Status{Locked: true}},
		{name: "held, stale record", setup: func(t *testing.T, path string) *Owner {
			holdFlock(t, path)
			o := Owner{PID: deadPID(t), BootID: me.BootID, Host: me.Host, Command: "pi", Mode: "write", Since: since}
			writeRecord(t, OwnerPath(path), o)
			return &o
		}, want: Status{Locked: true, Stale: true, Reason: "pid %d is gone"}},
		{name: "held, no record", setup: func(t *testing.T, path string) *Owner {
			holdFlock(t, path)
			return nil
		}, want: Status{Locked: true, Reason: "no owner record"}},
		{name: "not held, record left by a crash", setup: func(t *testing.T, path string) *Owner {
			mustAcquire(t, path, Options{}).Close()
			o := Owner{PID: deadPID(t), BootID: me.BootID, Host: me.Host, Command: "pi", Mode: "write", Since: since}
			writeRecord(t, OwnerPath(path), o)
			return &o
		}, want: Status{Stale: true, Reason: "not locked: the record is left from a holder that did not release the lock cleanly"}, freeAfter: true},
		{name: "fallback held by another process", setup: func(t *testing.T, path string) *Owner {
			h := startHelper(t, "hold", pathEnv(path), noFlockEnv(true))
			rec, err := readRecord(vfs.OS(), exclPath(path))
			if err != nil || rec.Owner == nil || rec.Owner.PID != h.pid() {
				t.Fatalf("helper's record = %+v, %v", rec.Owner, err)
			}
			return rec.Owner
		}, want: Status{Locked: true, Fallback: true}},
		{name: "fallback stale", setup: func(t *testing.T, path string) *Owner {
			o := Owner{PID: deadPID(t), BootID: me.BootID, Host: me.Host, Command: "pi", Mode: "write", Since: since}
			writeRecord(t, exclPath(path), o)
			return &o
		}, want: Status{Fallback: true, Stale: true, Reason: "pid %d is gone"}, freeAfter: true},
		{name: "fallback from another host", setup: func(t *testing.T, path string) *Owner {
			o := Owner{PID: 4821, Host: "buildbox", Command: "pi", Mode: "write", Since: since}
			writeRecord(t, exclPath(path), o)
			return &o
		}, want: Status{Locked: true, Fallback: true, Reason: "held from another host (buildbox)"}},
		{name: "reused pid", linuxOnly: true, setup: func(t *testing.T, path string) *Owner {
			holdFlock(t, path)
			o := Owner{PID: os.Getppid(), StartTime: 1, BootID: me.BootID, Host: me.Host, Command: "pi", Mode: "write", Since: since}
			writeRecord(t, OwnerPath(path), o)
			return &o
		}, want: Status{Locked: true, Stale: true, Reason: "pid %d was reused: start time differs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.linuxOnly && runtime.GOOS != "linux" {
				t.Skip("needs start times")
			}
			path := lockPath(t)
			want := tt.want
			want.Owner = tt.setup(t, path)
			if strings.Contains(want.Reason, "%d") {
				want.Reason = fmt.Sprintf(want.Reason, want.Owner.PID)
			}
			before := snapshot(t, filepath.Dir(path))
			got, err := Inspect(path)
			if err != nil {
				t.Fatalf("Inspect = %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Inspect (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, snapshot(t, filepath.Dir(path))); diff != "" {
				t.Errorf("Inspect changed the directory (-before +after):\n%s", diff)
			}
			if tt.freeAfter {
				mustAcquire(t, path, Options{}).Close()
			}
		})
	}
}
