package lock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout/vfs"
)

// fixedNow is the clock of tests that check messages.
var fixedNow = time.Date(2026, 3, 1, 10, 36, 5, 0, time.UTC)

func clock() time.Time { return fixedNow }

// lockPath returns a lock path in a fresh directory that does not exist yet.
func lockPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "sessions", "s.jsonl.lock")
}

func mustAcquire(t *testing.T, path string, opts Options) *Lock {
	t.Helper()
	l, err := Acquire(t.Context(), path, opts)
	if err != nil {
		t.Fatalf("Acquire(%s): %v", path, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// mustLocked acquires and wants a *LockedError.
func mustLocked(t *testing.T, path string, opts Options) *LockedError {
	t.Helper()
	l, err := Acquire(t.Context(), path, opts)
	if err == nil {
		l.Close()
		t.Fatalf("Acquire(%s) succeeded, want ErrLocked", path)
	}
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("Acquire(%s) = %v, want ErrLocked", path, err)
	}
	le, ok := errors.AsType[*LockedError](err)
	if !ok {
		t.Fatalf("Acquire(%s) = %T, want *LockedError", path, err)
	}
	return le
}

// holdFlock takes the flock on path through a separate open file
// description, the way another process would, without writing a record.
func holdFlock(t *testing.T, path string) *flock.Flock {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR))
	ok, err := fl.TryLock()
	if err != nil || !ok {
		t.Fatalf("TryLock(%s) = %v, %v", path, ok, err)
	}
	t.Cleanup(func() { fl.Close() })
	return fl
}

// writeRecord writes an owner record the way a holder would.
func writeRecord(t *testing.T, path string, o Owner) []byte {
	t.Helper()
	data, err := encodeOwner(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return data
}

func inode(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

func TestOwnerPath(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"/s/x.jsonl.lock", "/s/x.jsonl.owner"},
		{"/s/dir/session.lock", "/s/dir/session.owner"},
		{"/s/x.jsonl", "/s/x.jsonl.owner"},
		{"x.lock.lock", "x.lock.owner"},
		{".lock", ".owner"},
	}
	for _, tt := range tests {
		if got := OwnerPath(tt.in); got != tt.want {
			t.Errorf("OwnerPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	fields := func(comm string) string {
		// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime vsize
		return "4821 (" + comm + ") S 1 4821 4821 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1234567 ..."
	}
	tests := []struct {
		name    string
		data    string
		want    procStat
		wantErr bool
	}{
		{"plain", fields("pi"), procStat{State: 'S', StartTime: 987654}, false},
		{"spaces and parentheses in comm", fields("a) S 1 2 (b c"), procStat{State: 'S', StartTime: 987654}, false},
		{"zombie", strings.Replace(fields("x"), ") S ", ") Z ", 1), procStat{State: 'Z', StartTime: 987654}, false},
		{"no parenthesis", "4821 pi S 1", procStat{}, true},
		{"too few fields", "4821 (pi) S 1 2 3", procStat{}, true},
		{"bad start time", strings.Replace(fields("pi"), "987654", "x", 1), procStat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseProcStat([]byte(tt.data))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadProcStatSelf(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("start times are read on linux only")
	}
	st, err := readProcStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.StartTime == 0 || st.State == 'Z' {
		t.Errorf("readProcStat(self) = %+v", st)
	}
	if bootID() == "" {
		t.Error("bootID() is empty on linux")
	}
}

func TestLockedErrorMessage(t *testing.T) {
	t.Parallel()
	since := fixedNow.Add(-14 * time.Minute)
	owner := &Owner{PID: 4821, Host: "devbox", Command: "pi", Mode: "write", Since: since}
	withUser := &Owner{PID: 4821, Host: "devbox", User: "alice", Command: "sessctl", Mode: "migrate", Since: since.Add(-26 * time.Hour)}
	tests := []struct {
		name string
		err  LockedError
		want string
	}{
		{"live", LockedError{Path: "/s/x.lock", Owner: owner, Now: fixedNow},
			"lock /s/x.lock: locked by pid 4821 (pi) on devbox since 10:22:05 (14 min ago)"},
		{"mode, user, other day", LockedError{Path: "/s/x.lock", Owner: withUser, Now: fixedNow},
			"lock /s/x.lock: locked by pid 4821 (sessctl, migrate, user alice) on devbox since 2026-02-28 08:22:05 (1 day ago)"},
		{"self", LockedError{Path: "/s/x.lock", Owner: owner, Self: true, Now: fixedNow},
			"lock /s/x.lock: already open for writing in this process (pid 4821) since 10:22:05 (14 min ago)"},
		{"stale", LockedError{Path: "/s/x.lock", Owner: owner, Stale: true, Reason: "pid 4821 is gone", Now: fixedNow},
			"lock /s/x.lock: locked, but the owner record is stale (pid 4821 is gone): it names pid 4821 (pi) on devbox since 10:22:05 (14 min ago); the kernel lock is still held by some other process, e.g. a child that inherited it"},
		{"other host", LockedError{Path: "/s/x.lock", Owner: owner, Reason: "held from another host (devbox)", Now: fixedNow},
			"lock /s/x.lock: locked by pid 4821 (pi) on devbox since 10:22:05 (14 min ago); held from another host (devbox)"},
		{"no record", LockedError{Path: "/s/x.lock", Reason: "no owner record", Now: fixedNow},
			"lock /s/x.lock: locked by another process (no owner record)"},
		{"no record, no reason", LockedError{Path: "/s/x.lock"},
			"lock /s/x.lock: locked by another process (no owner record)"},
		{"no clock", LockedError{Path: "/s/x.lock", Owner: &Owner{PID: 7, Host: "h", Command: "c"}},
			"lock /s/x.lock: locked by pid 7 (c) on h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestAgo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Minute, ""},
		{0, "just now"},
		{42 * time.Second, "42 s ago"},
		{14 * time.Minute, "14 min ago"},
		{3 * time.Hour, "3 h ago"},
		{3*time.Hour + 5*time.Minute, "3 h 5 min ago"},
		{30 * time.Hour, "1 day ago"},
		{75 * time.Hour, "3 days ago"},
	}
	for _, tt := range tests {
		if got := ago(tt.d); got != tt.want {
			t.Errorf("ago(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestLockedErrorIs(t *testing.T) {
	t.Parallel()
	var err error = &LockedError{Path: "/s/x.lock"}
	wrapped := fmt.Errorf("open session x: %w", err)
	if !errors.Is(wrapped, ErrLocked) {
		t.Error("errors.Is(wrapped, ErrLocked) = false")
	}
	if errors.Is(wrapped, fs.ErrExist) {
		t.Error("errors.Is(wrapped, fs.ErrExist) = true")
	}
	if le, ok := errors.AsType[*LockedError](wrapped); !ok || le.Path != "/s/x.lock" {
		t.Errorf("errors.AsType = %v, %v", le, ok)
	}
}

func TestAcquireCreatesFiles(t *testing.T) {
	t.Parallel()
	path := lockPath(t)
	l := mustAcquire(t, path, Options{Command: "pi", Now: clock})
	if l.Path() != path {
		t.Errorf("Path() = %q, want %q", l.Path(), path)
	}
	me := currentSelf()
	want := Owner{PID: os.Getpid(), StartTime: me.StartTime, BootID: me.BootID, Host: me.Host,
		User: l.Owner().User, Command: "pi", Mode: "write", Since: fixedNow}
	if diff := cmp.Diff(want, l.Owner()); diff != "" {
		t.Errorf("Owner() (-want +got):\n%s", diff)
	}
	rec, err := readRecord(vfs.OS(), OwnerPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&want, rec.Owner); diff != "" {
		t.Errorf("owner record (-want +got):\n%s", diff)
	}
	if strings.Count(strings.TrimSpace(string(rec.Data)), "\n") != 0 {
		t.Errorf("owner record is not one line: %q", rec.Data)
	}
	for p, perm := range map[string]fs.FileMode{
		filepath.Dir(path): fs.ModeDir | 0o700,
		path:               0o600,
		OwnerPath(path):    0o600,
	} {
		if got := inode(t, p).Mode(); got != perm && runtime.GOOS != "windows" { // no modes on Windows
			t.Errorf("mode of %s = %v, want %v", p, got, perm)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(OwnerPath(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("owner record after Close: %v, want it removed", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestLockFileSurvivesRelease(t *testing.T) {
	t.Parallel()
	for _, noFlock := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoFlock=%v", noFlock), func(t *testing.T) {
			t.Parallel()
			path := lockPath(t)
			if noFlock {
				// The fallback never needs the lock file; make one to watch.
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var first os.FileInfo
			for i := range 3 {
				l := mustAcquire(t, path, Options{NoFlock: noFlock})
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				fi := inode(t, path)
				if first == nil {
					first = fi
				} else if !os.SameFile(first, fi) {
					t.Fatalf("cycle %d: lock file was replaced", i)
				}
			}
		})
	}
}

func TestCloseKeepsForeignOwnerRecord(t *testing.T) {
	t.Parallel()
	path := lockPath(t)
	l := mustAcquire(t, path, Options{})
	other := writeRecord(t, OwnerPath(path), Owner{PID: 1, Host: "elsewhere", Command: "x", Mode: "write"})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(OwnerPath(path))
	if err != nil || string(got) != string(other) {
		t.Errorf("owner record after Close = %q, %v; want it untouched", got, err)
	}
}

func TestSelf(t *testing.T) {
	t.Parallel()
	for _, noFlock := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoFlock=%v", noFlock), func(t *testing.T) {
			t.Parallel()
			path := lockPath(t)
			l := mustAcquire(t, path, Options{NoFlock: noFlock, Now: clock})
			le := mustLocked(t, path, Options{NoFlock: noFlock, Now: clock})
			if !le.Self || le.Stale || le.Owner == nil || le.Owner.PID != os.Getpid() {
				t.Errorf("LockedError = %+v, want Self with our pid", le)
			}
			want := fmt.Sprintf("already open for writing in this process (pid %d) since 10:36:05 (just now)", os.Getpid())
			if !strings.Contains(le.Error(), want) {
				t.Errorf("Error() = %q, want it to contain %q", le.Error(), want)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			mustAcquire(t, path, Options{NoFlock: noFlock}).Close()
		})
	}
}

func TestSymlinkRefused(t *testing.T) {
	t.Parallel()
	testenv.SkipOnWindows(t, "symbolic links need a privilege on Windows, and opens have no O_NOFOLLOW")
	tests := []struct {
		name    string
		link    func(lockPath string) string // where the symbolic link is planted
		noFlock bool
	}{
		{"lock path", func(p string) string { return p }, false},
		{"owner path", OwnerPath, false},
		{"fallback path", exclPath, true},
	}
	for _, tt := range tests {
		for _, targetExists := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/target exists=%v", tt.name, targetExists), func(t *testing.T) {
				t.Parallel()
				path := lockPath(t)
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				target := filepath.Join(t.TempDir(), "victim")
				const content = "precious\n"
				if targetExists {
					if err := os.WriteFile(target, []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				link := tt.link(path)
				if err := os.Symlink(target, link); err != nil {
					t.Fatal(err)
				}
				_, err := Acquire(t.Context(), path, Options{NoFlock: tt.noFlock})
				if err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), link) {
					t.Fatalf("Acquire = %v, want an error about the symbolic link %s", err, link)
				}
				if errors.Is(err, ErrLocked) {
					t.Errorf("Acquire = %v, want no ErrLocked", err)
				}
				got, rerr := os.ReadFile(target)
				switch {
				case !targetExists && !errors.Is(rerr, fs.ErrNotExist):
					t.Errorf("target was created: %q, %v", got, rerr)
				case targetExists && string(got) != content:
					t.Errorf("target = %q, %v; want it untouched", got, rerr)
				}
				if fi := inode(t, link); fi.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("%s is no longer a symbolic link", link)
				}
				// Nothing stays locked: with the link gone, Acquire works.
				if err := os.Remove(link); err != nil {
					t.Fatal(err)
				}
				mustAcquire(t, path, Options{NoFlock: tt.noFlock}).Close()
			})
		}
	}
}

func TestHeldByAnother(t *testing.T) {
	t.Parallel()
	me := currentSelf()
	sleeper := startHelper(t, "sleep")
	dead := deadPID(t)
	sleeperStart := uint64(0)
	if st, err := readProcStat(sleeper.pid()); err == nil {
		sleeperStart = st.StartTime
	}
	since := fixedNow.Add(-14 * time.Minute)
	rec := func(pid int, start uint64, boot, host string) *Owner {
		return &Owner{PID: pid, StartTime: start, BootID: boot, Host: host, Command: "pi", Mode: "write", Since: since}
	}
	tests := []struct {
		name      string
		owner     *Owner // nil: no record
		raw       string // written instead of owner when set
		linuxOnly bool
		want      LockedError
	}{
		{name: "live holder",
			owner: rec(sleeper.pid(), sleeperStart, me.BootID, me.Host),
			want:  LockedError{Owner: rec(sleeper.pid(), sleeperStart, me.BootID, me.Host)}},
		{name: "dead pid",
			owner: rec(dead, 0, me.BootID, me.Host),
			want:  LockedError{Owner: rec(dead, 0, me.BootID, me.Host), Stale: true, Reason: fmt.Sprintf("pid %d is gone", dead)}},
		{name: "reused pid", linuxOnly: true,
			owner: rec(sleeper.pid(), sleeperStart+1, me.BootID, me.Host),
			want:  LockedError{Owner: rec(sleeper.pid(), sleeperStart+1, me.BootID, me.Host), Stale: true, Reason: fmt.Sprintf("pid %d was reused: start time differs", sleeper.pid())}},
		{name: "own pid reused", linuxOnly: true,
			owner: rec(os.Getpid(), me.StartTime+1, me.BootID, me.Host),
			want:  LockedError{Owner: rec(os.Getpid(), me.StartTime+1, me.BootID, me.Host), Stale: true, Reason: fmt.Sprintf("pid %d was reused: start time differs", os.Getpid())}},
		{name: "other boot", linuxOnly: true,
			owner: rec(dead, 0, "another-boot", me.Host),
			want:  LockedError{Owner: rec(dead, 0, "another-boot", me.Host), Stale: true, Reason: "the record was written under another boot id (an earlier boot, or another machine with the same host name)"}},
		{name: "other host",
			owner: rec(dead, 0, "", "buildbox"),
			want:  LockedError{Owner: rec(dead, 0, "", "buildbox"), Reason: "held from another host (buildbox)"}},
		{name: "no record",
			want: LockedError{Reason: "no owner record"}},
		{name: "garbled record", raw: `{"pid": 12`,
			want: LockedError{Reason: "owner record is garbled"}},
		{name: "record without pid", raw: `{"host": "devbox"}`,
			want: LockedError{Reason: "owner record has no valid pid (0)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.linuxOnly && runtime.GOOS != "linux" {
				t.Skip("needs start times and boot ids")
			}
			path := lockPath(t)
			holdFlock(t, path)
			switch {
			case tt.raw != "":
				if err := os.WriteFile(OwnerPath(path), []byte(tt.raw), 0o600); err != nil {
					t.Fatal(err)
				}
			case tt.owner != nil:
				writeRecord(t, OwnerPath(path), *tt.owner)
			}
			le := mustLocked(t, path, Options{Now: clock})
			want := tt.want
			want.Path, want.Now = path, fixedNow
			if diff := cmp.Diff(&want, le); diff != "" {
				t.Errorf("LockedError (-want +got):\n%s", diff)
			}
			if tt.want.Stale && !strings.Contains(le.Error(), "stale") {
				t.Errorf("Error() = %q, want it to say stale", le.Error())
			}
		})
	}
}

// TestWait: a waiting Acquire gets the lock once the holder releases it,
// and not before. The holder releases only after the waiter has found it
// held (LockedError asks Options.Now), so the test asserts the order of
// events, not durations: it holds on a loaded machine.
func TestWait(t *testing.T) {
	t.Parallel()
	for _, noFlock := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoFlock=%v", noFlock), func(t *testing.T) {
			t.Parallel()
			path := lockPath(t)
			holder := mustAcquire(t, path, Options{NoFlock: noFlock})
			var released atomic.Bool
			found := make(chan struct{}) // closed when the waiter found the lock held
			var once sync.Once
			now := func() time.Time {
				once.Do(func() { close(found) })
				return time.Now()
			}
			go func() {
				<-found
				released.Store(true)
				holder.Close()
			}()
			l, err := Acquire(t.Context(), path, Options{NoFlock: noFlock, Wait: true, RetryInterval: 5 * time.Millisecond, Now: now})
			if err != nil {
				t.Fatalf("waiting Acquire = %v", err)
			}
			defer l.Close()
			if !released.Load() {
				t.Error("waiting Acquire returned before the holder released the lock")
			}
		})
	}
}

// TestWaitDeadline: a waiting Acquire gives up with ErrLocked and
// DeadlineExceeded once its context's deadline has passed, and not
// before: the start is taken before the deadline is set, so the elapsed
// time is at least the deadline however loaded the machine is.
func TestWaitDeadline(t *testing.T) {
	for _, noFlock := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoFlock=%v", noFlock), func(t *testing.T) {
			path := lockPath(t)
			mustAcquire(t, path, Options{NoFlock: noFlock})
			const deadline = 100 * time.Millisecond
			start := time.Now()
			ctx, cancel := context.WithTimeout(t.Context(), deadline)
			defer cancel()
			_, err := Acquire(ctx, path, Options{NoFlock: noFlock, Wait: true, RetryInterval: 10 * time.Millisecond})
			if d := time.Since(start); d < deadline {
				t.Errorf("Acquire gave up after %v, before the %v deadline", d, deadline)
			}
			if !errors.Is(err, ErrLocked) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Acquire = %v, want ErrLocked and DeadlineExceeded", err)
			}
			if le, ok := errors.AsType[*LockedError](err); !ok || !le.Self {
				t.Errorf("errors.AsType = %+v, %v; want a *LockedError with Self", le, ok)
			}
		})
	}
}

func TestAcquireCanceledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := Acquire(ctx, lockPath(t), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire = %v, want context.Canceled", err)
	}
}

func TestCheckIdentity(t *testing.T) {
	t.Parallel()
	testenv.SkipOnWindows(t, "a held lock file is open without delete sharing, so Windows lets nobody remove or replace it: the case cannot arise")
	tests := []struct {
		name    string
		change  func(t *testing.T, path string)
		wantErr error
	}{
		{"intact", func(*testing.T, string) {}, nil},
		{"removed", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, errRetry},
		{"replaced", func(t *testing.T, path string) {
			tmp := path + ".new"
			if err := os.WriteFile(tmp, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}, errRetry},
		{"replaced by a symbolic link", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(path+".elsewhere", path); err != nil {
				t.Fatal(err)
			}
		}, errSymlink},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := lockPath(t)
			fl := holdFlock(t, path)
			tt.change(t, path)
			err := checkIdentity(vfs.OS(), fl, path)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("checkIdentity = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestAcquireRetriesReplacedFile(t *testing.T) {
	t.Parallel()
	testenv.SkipOnWindows(t, "a held lock file is open without delete sharing, so Windows lets nobody remove or replace it: the case cannot arise")
	// A lock file that was unlinked while a holder kept its descriptor is
	// no obstacle: the new file at the path is a different inode.
	path := lockPath(t)
	holdFlock(t, path)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, path, Options{}).Close()
}

// Remove deletes the lock file and owner record while the lock is held;
// the next Acquire makes a new file and holds it. (A process that opened
// the old file before the removal starts over: TestAcquireRetriesReplacedFile.)
func TestRemove(t *testing.T) {
	t.Parallel()
	path := lockPath(t)
	l := mustAcquire(t, path, Options{})
	removed, err := l.Remove()
	if err != nil || !removed {
		t.Fatalf("Remove = %v, %v", removed, err)
	}
	for _, p := range []string{path, OwnerPath(path)} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	if removed, err := l.Remove(); removed || err != nil {
		t.Errorf("second Remove = %v, %v", removed, err)
	}
	l2 := mustAcquire(t, path, Options{})
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("Acquire after Remove made no lock file: %v", err)
	}
	mustLocked(t, path, Options{})
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}

	t.Run("after Close it removes nothing", func(t *testing.T) {
		l := mustAcquire(t, path, Options{})
		l.Close()
		if removed, err := l.Remove(); removed || err != nil {
			t.Errorf("Remove after Close = %v, %v", removed, err)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("lock file gone: %v", err)
		}
	})
}
