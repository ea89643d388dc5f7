package lock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/layout/vfs"
)

// leftovers lists the ".stale-*" and ".tmp-*" files in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".stale-") || strings.Contains(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestFallbackHoldsExclFile(t *testing.T) {
	t.Parallel()
	path := lockPath(t)
	l := mustAcquire(t, path, Options{NoFlock: true, Command: "pi", Now: clock})
	rec, err := readRecord(vfs.OS(), exclPath(path))
	if err != nil {
		t.Fatal(err)
	}
	want := l.Owner()
	if diff := cmp.Diff(&want, rec.Owner); diff != "" {
		t.Errorf("record in %s (-want +got):\n%s", exclPath(path), diff)
	}
	if got := inode(t, exclPath(path)).Mode(); got != 0o600 && runtime.GOOS != "windows" { // no modes on Windows
		t.Errorf("mode of %s = %v, want 0600", exclPath(path), got)
	}
	if _, err := os.Lstat(OwnerPath(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("fallback mode wrote %s: %v", OwnerPath(path), err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(exclPath(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s after Close: %v, want it removed", exclPath(path), err)
	}
}

func TestFallbackCloseLeavesForeignFile(t *testing.T) {
	t.Parallel()
	path := lockPath(t)
	l := mustAcquire(t, path, Options{NoFlock: true})
	other := writeRecord(t, exclPath(path), Owner{PID: 1, Host: "buildbox", Command: "pi", Mode: "write"})
	err := l.Close()
	if err == nil || !strings.Contains(err.Error(), "no longer holds this process's record") {
		t.Errorf("Close = %v, want an error saying the file is not ours", err)
	}
	if got, _ := os.ReadFile(exclPath(path)); string(got) != string(other) {
		t.Errorf("%s = %q, want it untouched", exclPath(path), got)
	}
}

func TestFallbackOtherProcess(t *testing.T) {
	t.Parallel()
	path := lockPath(t)
	h := startHelper(t, "hold", pathEnv(path), noFlockEnv(true))
	le := mustLocked(t, path, Options{NoFlock: true, Now: clock})
	if le.Owner == nil || le.Owner.PID != h.pid() || le.Owner.Command != "helper" || le.Self || le.Stale {
		t.Fatalf("LockedError = %+v (owner %+v), want the helper pid %d", le, le.Owner, h.pid())
	}
	if le.Path != exclPath(path) {
		t.Errorf("LockedError.Path = %q, want %q", le.Path, exclPath(path))
	}
	h.stop(t)
	mustAcquire(t, path, Options{NoFlock: true}).Close()
}

func TestFallbackStaleTakeover(t *testing.T) {
	t.Parallel()
	me := currentSelf()
	tests := []struct {
		name      string
		owner     func(t *testing.T) Owner
		linuxOnly bool
	}{
		{"dead pid", func(t *testing.T) Owner {
			return Owner{PID: deadPID(t), BootID: me.BootID, Host: me.Host, Command: "pi", Mode: "write"}
		}, false},
		{"reused pid", func(t *testing.T) Owner {
			h := startHelper(t, "sleep")
			st, err := readProcStat(h.pid())
			if err != nil {
				t.Fatal(err)
			}
			return Owner{PID: h.pid(), StartTime: st.StartTime + 1, BootID: me.BootID, Host: me.Host, Command: "pi", Mode: "write"}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.linuxOnly && runtime.GOOS != "linux" {
				t.Skip("needs start times")
			}
			path := lockPath(t)
			writeRecord(t, exclPath(path), tt.owner(t))
			l := mustAcquire(t, path, Options{NoFlock: true})
			rec, err := readRecord(vfs.OS(), exclPath(path))
			if err != nil || rec.Owner == nil || rec.Owner.PID != os.Getpid() {
				t.Fatalf("after takeover %s holds %+v, %v; want our record", exclPath(path), rec.Owner, err)
			}
			if got := leftovers(t, filepath.Dir(path)); len(got) != 0 {
				t.Errorf("files left behind: %v", got)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestFallbackNeverTakesOver(t *testing.T) {
	t.Parallel()
	me := currentSelf()
	tests := []struct {
		name       string
		data       func(t *testing.T) []byte
		linuxOnly  bool
		wantReason string
	}{
		{"another host", func(t *testing.T) []byte {
			b, _ := encodeOwner(Owner{PID: deadPID(t), Host: "buildbox", Command: "pi", Mode: "write"})
			return b
		}, false, "held from another host (buildbox)"},
		{"another boot", func(t *testing.T) []byte {
			b, _ := encodeOwner(Owner{PID: deadPID(t), BootID: "another-boot", Host: me.Host, Command: "pi", Mode: "write"})
			return b
		}, true, "the record was written under another boot id (an earlier boot, or another machine with the same host name); not taken over automatically"},
		{"live pid", func(t *testing.T) []byte {
			b, _ := encodeOwner(Owner{PID: startHelper(t, "sleep").pid(), BootID: me.BootID, Host: me.Host, Command: "pi", Mode: "write"})
			return b
		}, false, ""},
		{"empty file", func(*testing.T) []byte { return nil }, false, "owner record is empty"},
		{"garbled", func(*testing.T) []byte { return []byte("{\"pid\":") }, false, "owner record is garbled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.linuxOnly && runtime.GOOS != "linux" {
				t.Skip("needs boot ids")
			}
			path := lockPath(t)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			data := tt.data(t)
			if err := os.WriteFile(exclPath(path), data, 0o600); err != nil {
				t.Fatal(err)
			}
			le := mustLocked(t, path, Options{NoFlock: true})
			if le.Stale || le.Self || le.Reason != tt.wantReason {
				t.Errorf("LockedError = %+v, want not stale, reason %q", le, tt.wantReason)
			}
			if got, _ := os.ReadFile(exclPath(path)); string(got) != string(data) {
				t.Errorf("%s = %q, want it untouched", exclPath(path), got)
			}
			if got := leftovers(t, filepath.Dir(path)); len(got) != 0 {
				t.Errorf("files left behind: %v", got)
			}
		})
	}
}

func TestTakeOverConfirmsRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	excl := filepath.Join(dir, "s.lock.excl")
	fresh := []byte(`{"pid":1,"host":"h","command":"new","mode":"write","since":"2026-03-01T10:00:00Z"}` + "\n")
	if err := os.WriteFile(excl, fresh, 0o600); err != nil {
		t.Fatal(err)
	}
	// The record judged stale was an older one; the file now holds a new
	// holder's record, which must be put back, not removed.
	if err := takeOver(vfs.OS(), excl, []byte("old record")); err != nil {
		t.Fatalf("takeOver = %v", err)
	}
	if got, err := os.ReadFile(excl); err != nil || string(got) != string(fresh) {
		t.Errorf("%s = %q, %v; want the new record back", excl, got, err)
	}
	if got := leftovers(t, dir); len(got) != 0 {
		t.Errorf("files left behind: %v", got)
	}
}

func TestMixedModes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		holder, second  bool // NoFlock of the holder and of the second acquirer
		wantSecondInErr string
	}{
		{"flock holder, fallback acquirer", false, true, ".lock:"},
		{"fallback holder, flock acquirer", true, false, ".lock.excl:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			t.Run("same process", func(t *testing.T) {
				path := lockPath(t)
				l := mustAcquire(t, path, Options{NoFlock: tt.holder})
				le := mustLocked(t, path, Options{NoFlock: tt.second})
				if !le.Self {
					t.Errorf("LockedError = %+v, want Self", le)
				}
				if !strings.Contains(le.Error(), tt.wantSecondInErr) {
					t.Errorf("Error() = %q, want it to name the %s file", le.Error(), tt.wantSecondInErr)
				}
				if _, err := os.Lstat(exclPath(path)); tt.second && !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the backed-off fallback acquirer left %s: %v", exclPath(path), err)
				}
				l.Close()
				mustAcquire(t, path, Options{NoFlock: tt.second}).Close()
			})
			t.Run("other process", func(t *testing.T) {
				path := lockPath(t)
				h := startHelper(t, "hold", pathEnv(path), noFlockEnv(tt.holder))
				le := mustLocked(t, path, Options{NoFlock: tt.second})
				if le.Owner == nil || le.Owner.PID != h.pid() {
					t.Errorf("LockedError = %+v, want the helper's pid %d", le, h.pid())
				}
				h.stop(t)
				mustAcquire(t, path, Options{NoFlock: tt.second}).Close()
			})
		})
	}
}

func TestFallbackKilledHolder(t *testing.T) {
	t.Parallel()
	path := lockPath(t)
	h := startHelper(t, "hold", pathEnv(path), noFlockEnv(true))
	h.kill(t)
	// Free at once: an Acquire that does not wait gets it.
	l := mustAcquire(t, path, Options{NoFlock: true})
	if got := l.Owner().PID; got != os.Getpid() {
		t.Errorf("Owner().PID = %d, want %d", got, os.Getpid())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := leftovers(t, filepath.Dir(path)); len(got) != 0 {
		t.Errorf("files left behind: %v", fmt.Sprint(got))
	}
}
