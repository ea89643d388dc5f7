package vfstest_test

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// TestFaultFSFailsTheNthCall arms one fault per case and runs the same
// sequence of operations (each kind three times) on a fresh FaultFS over
// a CrashFS, checking which call failed, how, and that nothing else did.
func TestFaultFSFailsTheNthCall(t *testing.T) {
	t.Parallel()
	// Handles are opened before the fault is armed, so that each call
	// below is exactly one operation of its kind.
	type handles struct {
		rw     vfs.File
		closes []vfs.File
	}
	type call struct {
		op vfstest.Op
		do func(fsys vfs.FS, h *handles, i int) error
	}
	calls := []call{
		{vfstest.OpCreate, func(fsys vfs.FS, _ *handles, i int) error {
			_, err := fsys.OpenFile("/d/f"+itoa(i), os.O_WRONLY|os.O_CREATE, 0o600)
			return err
		}},
		{vfstest.OpOpen, func(fsys vfs.FS, _ *handles, i int) error {
			_, err := fsys.OpenFile("/d/base", os.O_RDONLY, 0)
			return err
		}},
		{vfstest.OpWrite, func(_ vfs.FS, h *handles, _ int) error { _, err := h.rw.Write([]byte("0123456789")); return err }},
		{vfstest.OpSync, func(_ vfs.FS, h *handles, _ int) error { return h.rw.Sync() }},
		{vfstest.OpTruncate, func(_ vfs.FS, h *handles, _ int) error { return h.rw.Truncate(4) }},
		{vfstest.OpRead, func(fsys vfs.FS, _ *handles, _ int) error { _, err := fsys.ReadFile("/d/base"); return err }},
		{vfstest.OpStat, func(fsys vfs.FS, _ *handles, _ int) error { _, err := fsys.Stat("/d/base"); return err }},
		{vfstest.OpReadDir, func(fsys vfs.FS, _ *handles, _ int) error { _, err := fsys.ReadDir("/d"); return err }},
		{vfstest.OpRename, func(fsys vfs.FS, _ *handles, _ int) error { return fsys.Rename("/d/base", "/d/base") }},
		{vfstest.OpLink, func(fsys vfs.FS, _ *handles, i int) error { return fsys.Link("/d/base", "/d/l"+itoa(i)) }},
		{vfstest.OpRemove, func(fsys vfs.FS, _ *handles, i int) error { return fsys.Remove("/d/r" + itoa(i)) }},
		{vfstest.OpMkdir, func(fsys vfs.FS, _ *handles, i int) error { return fsys.MkdirAll("/d/sub"+itoa(i), 0o700) }},
		{vfstest.OpSyncDir, func(fsys vfs.FS, _ *handles, _ int) error { return fsys.SyncDir("/d") }},
		{vfstest.OpClose, func(_ vfs.FS, h *handles, i int) error { return h.closes[i-1].Close() }},
	}
	for _, target := range calls {
		for _, n := range []int{1, 2, 3} {
			for _, errno := range []syscall.Errno{syscall.EIO, syscall.ENOSPC} {
				name := target.op.String() + "#" + itoa(n) + " " + errno.Error()
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					base := vfstest.NewCrashFS()
					must(t, base.MkdirAll("/d", 0o700))
					mustWriteFile(t, base, "/d/base", "base", true)
					for i := 1; i <= 3; i++ {
						mustWriteFile(t, base, "/d/r"+itoa(i), "", false)
					}
					ffs := vfstest.NewFaultFS(base)
					h := &handles{}
					var err error
					h.rw, err = ffs.OpenFile("/d/base", os.O_RDWR|os.O_APPEND, 0)
					must(t, err)
					for range 3 {
						f, err := ffs.OpenFile("/d/base", os.O_RDONLY, 0)
						must(t, err)
						h.closes = append(h.closes, f)
					}
					ffs.Inject(vfstest.Fault{Op: target.op, N: n, Err: errno})
					var failed []string
					for i := 1; i <= 3; i++ {
						for _, c := range calls {
							err := c.do(ffs, h, i)
							if err == nil {
								continue
							}
							failed = append(failed, c.op.String()+"#"+itoa(i))
							if !errors.Is(err, errno) {
								t.Errorf("%s#%d failed with %v, want %v", c.op, i, err, errno)
							}
							var pe *fs.PathError
							var le *os.LinkError
							if !errors.As(err, &pe) && !errors.As(err, &le) {
								t.Errorf("%s#%d: error %T is neither *fs.PathError nor *os.LinkError", c.op, i, err)
							}
						}
					}
					want := []string{target.op.String() + "#" + itoa(n)}
					if diff := cmp.Diff(want, failed); diff != "" {
						t.Errorf("failed calls (-want +got):\n%s", diff)
					}
					if got := ffs.Injected(); got != 1 {
						t.Errorf("Injected() = %d, want 1", got)
					}
				})
			}
		}
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

// TestFaultFSPartialWrite checks the full-disk fault: the failing write
// stores a prefix of its bytes and later writes keep failing.
func TestFaultFSPartialWrite(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		fault    vfstest.Fault
		wantN    []int
		wantData string
		wantErr  []error
	}{
		{
			name:     "disk full keeps half and stays full",
			fault:    vfstest.DiskFull(2),
			wantN:    []int{6, 3, 3},
			wantData: "line1\nlin" + "lin",
			wantErr:  []error{nil, syscall.ENOSPC, syscall.ENOSPC},
		},
		{
			name:     "explicit prefix once",
			fault:    vfstest.Fault{Op: vfstest.OpWrite, N: 1, Err: syscall.ENOSPC, Written: 2},
			wantN:    []int{2, 6, 6},
			wantData: "li" + "line2\n" + "line3\n",
			wantErr:  []error{syscall.ENOSPC, nil, nil},
		},
		{
			name:     "nothing written by default",
			fault:    vfstest.Fault{Op: vfstest.OpWrite, N: 3},
			wantN:    []int{6, 6, 0},
			wantData: "line1\nline2\n",
			wantErr:  []error{nil, nil, syscall.EIO},
		},
		{
			name:     "short write without an error",
			fault:    vfstest.Fault{Op: vfstest.OpWrite, N: 2, Written: 3, Short: true},
			wantN:    []int{6, 3, 6},
			wantData: "line1\nlin" + "line3\n",
			wantErr:  []error{nil, nil, nil},
		},
		{
			name:     "prefix longer than the write",
			fault:    vfstest.Fault{Op: vfstest.OpWrite, N: 1, Err: syscall.ENOSPC, Written: 100},
			wantN:    []int{6, 6, 6},
			wantData: "line1\nline2\nline3\n",
			wantErr:  []error{syscall.ENOSPC, nil, nil},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := vfstest.NewCrashFS()
			ffs := vfstest.NewFaultFS(base)
			ffs.Inject(tc.fault)
			f, err := ffs.OpenFile("/f", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
			must(t, err)
			var gotN []int
			for i, line := range []string{"line1\n", "line2\n", "line3\n"} {
				n, err := f.Write([]byte(line))
				gotN = append(gotN, n)
				if !errors.Is(err, tc.wantErr[i]) || (err == nil) != (tc.wantErr[i] == nil) {
					t.Errorf("write %d: err %v, want %v", i+1, err, tc.wantErr[i])
				}
			}
			must(t, f.Close())
			if diff := cmp.Diff(tc.wantN, gotN); diff != "" {
				t.Errorf("bytes written per call (-want +got):\n%s", diff)
			}
			data, err := base.ReadFile("/f")
			must(t, err)
			if diff := cmp.Diff(tc.wantData, string(data)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFaultFSMatchRepeatAndClear(t *testing.T) {
	t.Parallel()
	ffs := vfstest.NewFaultFS(vfstest.NewCrashFS())
	ffs.Inject(vfstest.Fault{Op: vfstest.OpSync, Repeat: true, Match: func(p string) bool { return strings.HasSuffix(p, ".jsonl") }})
	for _, name := range []string{"/a.jsonl", "/b.txt"} {
		mustWriteFile(t, ffs, name, "x", false)
	}
	sync := func(name string) error {
		f, err := ffs.OpenFile(name, os.O_WRONLY, 0)
		must(t, err)
		defer f.Close()
		return f.Sync()
	}
	for i := range 3 {
		if err := sync("/a.jsonl"); !errors.Is(err, syscall.EIO) {
			t.Errorf("sync %d of the matching file: %v, want EIO", i, err)
		}
		if err := sync("/b.txt"); err != nil {
			t.Errorf("sync %d of another file: %v", i, err)
		}
	}
	ffs.Clear()
	if err := sync("/a.jsonl"); err != nil {
		t.Errorf("sync after Clear: %v", err)
	}
	if got, want := ffs.Calls(vfstest.OpSync), 7; got != want {
		t.Errorf("Calls(OpSync) = %d, want %d", got, want)
	}
	if got, want := ffs.Injected(), 3; got != want {
		t.Errorf("Injected() = %d, want %d", got, want)
	}
}

func TestFaultFSHook(t *testing.T) {
	t.Parallel()
	ffs := vfstest.NewFaultFS(vfstest.NewCrashFS())
	var seen []string
	stop := errors.New("stopped by hook")
	ffs.SetHook(func(op vfstest.Op, path string) error {
		seen = append(seen, op.String()+" "+path)
		if op == vfstest.OpRename {
			return stop
		}
		return nil
	})
	must(t, ffs.MkdirAll("/d", 0o700))
	mustWriteFile(t, ffs, "/d/f", "x", true)
	err := ffs.Rename("/d/f", "/d/g")
	if !errors.Is(err, stop) {
		t.Errorf("rename: %v, want the hook's error", err)
	}
	if _, err := ffs.Stat("/d/f"); err != nil {
		t.Errorf("the failed rename ran anyway: %v", err)
	}
	ffs.SetHook(nil)
	must(t, ffs.SyncDir("/d"))
	want := []string{"mkdir /d", "create /d/f", "write /d/f", "sync /d/f", "close /d/f", "rename /d/f", "stat /d/f"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("hook calls (-want +got):\n%s", diff)
	}
	var mutating []string
	for op := vfstest.OpOpen; op <= vfstest.OpSyncDir; op++ {
		if op.Mutates() {
			mutating = append(mutating, op.String())
		}
	}
	if diff := cmp.Diff([]string{"create", "write", "sync", "truncate", "rename", "link", "remove", "mkdir", "syncdir"}, mutating); diff != "" {
		t.Errorf("mutating ops (-want +got):\n%s", diff)
	}
}

// TestFaultFSOverOS checks that the wrapper passes calls through to the
// real filesystem unchanged and that its files keep their identity.
func TestFaultFSOverOS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ffs := vfstest.NewFaultFS(vfs.OS())
	p := dir + "/s.jsonl"
	must(t, vfs.WriteFileAtomic(ffs, p, []byte("{}\n"), vfs.FileMode))
	f, err := ffs.OpenFile(p, os.O_WRONLY|os.O_APPEND|vfs.NoFollow, 0)
	must(t, err)
	st, err := f.Stat()
	must(t, err)
	ls, err := ffs.Lstat(p)
	must(t, err)
	if !vfs.SameFile(st, ls) {
		t.Error("the open file and its path are not the same file through FaultFS")
	}
	must(t, f.Close())
	data, err := os.ReadFile(p)
	must(t, err)
	if string(data) != "{}\n" {
		t.Errorf("file = %q", data)
	}
	if ffs.Injected() != 0 {
		t.Errorf("Injected() = %d without faults", ffs.Injected())
	}
}

// TestFaultFSMkdirRemoveAll checks that Mkdir counts and fails as OpMkdir
// and RemoveAll as OpRemove, leaving the tree as it was.
func TestFaultFSMkdirRemoveAll(t *testing.T) {
	t.Parallel()
	base := vfstest.NewCrashFS()
	must(t, base.MkdirAll("/d/sub", 0o700))
	mustWriteFile(t, base, "/d/sub/f", "data", true)
	ffs := vfstest.NewFaultFS(base)
	ffs.Inject(vfstest.Fault{Op: vfstest.OpMkdir, Err: syscall.ENOSPC})
	if err := ffs.Mkdir("/d/new", 0o700); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Mkdir with a fault: %v, want ENOSPC", err)
	}
	if _, err := base.Stat("/d/new"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed Mkdir made the directory: %v", err)
	}
	ffs.Inject(vfstest.Fault{Op: vfstest.OpRemove})
	var pe *fs.PathError
	if err := ffs.RemoveAll("/d/sub"); !errors.Is(err, syscall.EIO) || !errors.As(err, &pe) || pe.Path != "/d/sub" {
		t.Errorf("RemoveAll with a fault: %v, want EIO naming /d/sub", err)
	}
	if _, err := base.Stat("/d/sub/f"); err != nil {
		t.Errorf("a failed RemoveAll removed something: %v", err)
	}
	must(t, ffs.Mkdir("/d/new", 0o700))
	must(t, ffs.RemoveAll("/d/sub"))
	if got := [2]int{ffs.Calls(vfstest.OpMkdir), ffs.Calls(vfstest.OpRemove)}; got != [2]int{2, 2} {
		t.Errorf("calls of mkdir and remove: %v, want [2 2]", got)
	}
}
