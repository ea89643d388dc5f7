package replica_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
	"github.com/sessctl/sessctl/replica"
	"github.com/sessctl/sessctl/replica/internal/clienttest"
)

func dirClient(t testing.TB, dir string, fsys vfs.FS) replica.Client {
	t.Helper()
	c, err := replica.NewDirClient(dir, fsys)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func putString(t testing.TB, c replica.Client, key, data string) replica.ObjectInfo {
	t.Helper()
	info, err := c.Put(context.Background(), key, strings.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return info
}

// files lists every file and directory below dir, relative, "/"-separated
// (directories with a trailing "/").
func files(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A remote is named by an s3:// URL or a directory: a file:// URL, an
// absolute path or one starting with ./ or ../ (the same directory
// however it is named); anything else, a bare relative name above all
// (an s3 remote without its scheme), is ErrBadRemote, and Open touches
// nothing.
func TestRemoteNames(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{"", "bucket/prefix", "remote", "gs://bucket/x", "file://otherhost/x", "file:", "file:relative/x", "s3://", "s3:///x"} {
		if _, err := replica.Open(replica.Options{Remote: bad, AgentDir: dir}); !errors.Is(err, replica.ErrBadRemote) {
			t.Errorf("open %q: %v, want ErrBadRemote", bad, err)
		}
	}
	// The same directory, named three ways: a session pushed through
	// one name is in sync through the others.
	remote := filepath.Join(dir, "remote")
	if err := os.Mkdir(remote, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	m := newMachine(t, &backend{}, fileURL(remote))
	m.newSession(t, "/names", 1)
	m.run(t, "push")
	for _, name := range []string{remote, "." + string(filepath.Separator) + "remote", "file://localhost" + strings.TrimPrefix(fileURL(remote), "file://")} {
		m.opts.Remote = name
		m.opts.StateDir = "" // compare in full
		if rep := m.run(t, "status"); len(rep.Sessions) != 1 || rep.Sessions[0].State != "compare" || rep.Requests == 0 {
			t.Errorf("status through %q: %+v", name, rep.Sessions)
		}
		if rep := m.run(t, "sync"); rep.Uploaded != 0 || rep.Sessions[0].State != "in sync" {
			t.Errorf("sync through %q uploaded %d bytes: %+v", name, rep.Uploaded, rep.Sessions)
		}
	}
	// Open of a directory that does not exist creates nothing; the
	// first run says the remote is missing.
	missing := filepath.Join(dir, "missing")
	m.opts.Remote = missing
	r := m.remote(t)
	if _, err := r.Push(context.Background()); !errors.Is(err, replica.ErrNoBucket) {
		t.Errorf("push to a missing directory: %v, want ErrNoBucket", err)
	}
	if _, err := os.Lstat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the push made the missing directory: %v", err)
	}
}

// A directory remote holds what its keys name and nothing it should not:
// keys it cannot hold as files are refused without writing anything, its
// own files (the lock, files being written) and what is not a regular
// file are left out of listings and never read through, files are 0600
// and directories 0700, and a delete removes the directories it empties.
func TestDirClientFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := dirClient(t, dir, nil)
	for _, bad := range []string{"", "/a", "a/", "a//b", ".a", "a/.b", "a/../b", "./a", `a\b`, "a/\x00"} {
		if _, err := c.Put(ctx, bad, strings.NewReader("x"), 1); err == nil {
			t.Errorf("put %q succeeded", bad)
		}
		if _, _, err := c.Get(ctx, bad); err == nil || errors.Is(err, replica.ErrObjectNotFound) {
			t.Errorf("get %q: %v, want an error about the key", bad, err)
		}
	}
	if got := files(t, dir); len(got) > 0 {
		t.Fatalf("refused keys left %v", got)
	}
	putString(t, c, "m/pi/a.jsonl/0000000001", "one")
	putString(t, c, "m/pi/b.jsonl/0000000001", "two")
	putString(t, c, "d/0123", "data")
	// A crash's leftover, a symbolic link and a named pipe.
	if err := os.WriteFile(filepath.Join(dir, "d", ".tmp-0badc0de"), []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	special := plantSpecial(t, filepath.Join(dir, "d")) // a symbolic link, a named pipe
	for _, name := range special {
		if _, _, err := c.Get(ctx, "d/"+name); err == nil {
			t.Errorf("get d/%s (not a regular file) succeeded", name)
		}
	}
	keys, _ := clienttest.ListKeys(t, c, "")
	if diff := cmp.Diff([]string{"d/0123", "m/pi/a.jsonl/0000000001", "m/pi/b.jsonl/0000000001"}, keys); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}
	if runtime.GOOS != "windows" {
		for _, f := range []string{"m/pi/a.jsonl/0000000001", "d/0123", dirLock} {
			if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s: %v, mode %v", f, err, fi.Mode())
			}
		}
		for _, d := range []string{"m", "m/pi", "m/pi/a.jsonl", "d"} {
			if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s: %v, mode %v", d, err, fi.Mode())
			}
		}
	}
	for _, k := range []string{"m/pi/a.jsonl/0000000001", "m/pi/b.jsonl/0000000001"} {
		if err := c.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{dirLock, "d/", "d/.tmp-0badc0de", "d/0123"}
	for _, name := range special {
		want = append(want, "d/"+name)
	}
	got := files(t, dir)
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after the deletes (-want +got):\n%s", diff)
	}
}

// dirLock is the directory client's lock file.
const dirLock = ".sessctl-lock"

// Where the filesystem has no hard links, PutIfAbsent checks and renames
// under the lock instead: still one winner of concurrent creates.
func TestDirClientWithoutHardLinks(t *testing.T) {
	ctx := context.Background()
	ffs := vfstest.NewFaultFS(vfs.OS())
	ffs.Inject(vfstest.Fault{Op: vfstest.OpLink, Err: syscall.EPERM, Repeat: true})
	dir := t.TempDir()
	c := dirClient(t, dir, ffs)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			body := "writer " + strconv.Itoa(i)
			_, errs[i] = c.PutIfAbsent(ctx, "m/pi/x.jsonl/0000000001", strings.NewReader(body), int64(len(body)))
		})
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, replica.ErrObjectExists):
			t.Errorf("writer %d: %v", i, err)
		}
	}
	if won != 1 || ffs.Calls(vfstest.OpLink) != n {
		t.Fatalf("%d writers won, %d links tried; want 1 and %d", won, ffs.Calls(vfstest.OpLink), n)
	}
	keys, _ := clienttest.ListKeys(t, c, "")
	if !slices.Equal(keys, []string{"m/pi/x.jsonl/0000000001"}) {
		t.Errorf("remote holds %v", keys)
	}
	if got := files(t, filepath.Join(dir, "m", "pi", "x.jsonl")); !slices.Equal(got, []string{"0000000001"}) {
		t.Errorf("left beside the object: %v", got)
	}
}

// A write that fails at any step (creating, writing or syncing the new
// file, renaming or linking it, syncing the directory) leaves the object
// as it was, or says it may have changed only when the new version was
// complete, and leaves no file being written behind.
func TestDirClientFailedWrites(t *testing.T) {
	ctx := context.Background()
	common := []vfstest.Op{vfstest.OpMkdir, vfstest.OpCreate, vfstest.OpWrite, vfstest.OpSync, vfstest.OpClose, vfstest.OpSyncDir}
	for how, ops := range map[string][]vfstest.Op{
		"Put":         slices.Concat(common, []vfstest.Op{vfstest.OpRename}),
		"PutIfAbsent": slices.Concat(common, []vfstest.Op{vfstest.OpLink}),
		"PutIfMatch":  slices.Concat(common, []vfstest.Op{vfstest.OpRename}),
	} {
		for _, op := range ops {
			t.Run(how+"/"+op.String(), func(t *testing.T) {
				ffs := vfstest.NewFaultFS(vfs.OS())
				dir := t.TempDir()
				c := dirClient(t, dir, ffs)
				key := "m/pi/x.jsonl/0000000001"
				old := ""
				var etag string
				if how != "PutIfAbsent" {
					old = "old version"
					etag = putString(t, c, key, old).ETag
				}
				ffs.Inject(vfstest.Fault{Op: op, Match: func(p string) bool { return strings.HasPrefix(p, dir) }})
				calls := ffs.Calls(op)
				body := "new version"
				var err error
				switch how {
				case "Put":
					_, err = c.Put(ctx, key, strings.NewReader(body), int64(len(body)))
				case "PutIfAbsent":
					_, err = c.PutIfAbsent(ctx, key, strings.NewReader(body), int64(len(body)))
				default:
					_, err = c.PutIfMatch(ctx, key, strings.NewReader(body), int64(len(body)), etag)
				}
				if ffs.Calls(op) == calls {
					t.Fatalf("%s made no %s call", how, op)
				}
				if err == nil {
					t.Fatalf("%s with a failing %s succeeded", how, op)
				}
				ffs.Clear()
				data, _, gerr := clienttest.Read(t, c, key)
				switch {
				case gerr == nil && string(data) == old, gerr != nil && old == "" && errors.Is(gerr, replica.ErrObjectNotFound):
				case gerr == nil && string(data) == body && op == vfstest.OpSyncDir:
					// The rename was done; only its durability is in doubt.
				default:
					t.Errorf("after a failed %s: %q, %v; want %q", how, data, gerr, old)
				}
				for _, f := range files(t, dir) {
					if strings.Contains(f, ".tmp-") {
						t.Errorf("left %s", f)
					}
				}
			})
		}
	}
}

// What a directory client's write or delete acknowledged survives a
// power cut (CrashFS keeps what was synced: the files and the directory
// entries).
func TestDirClientDurable(t *testing.T) {
	ctx := context.Background()
	cfs := vfstest.NewCrashFS()
	root := "/remote"
	if err := cfs.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := cfs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	c := dirClient(t, root, cfs)
	want := map[string]string{}
	check := func(step string) {
		t.Helper()
		after := dirClient(t, root, cfs.CrashClone(nil))
		got := map[string]string{}
		for o, err := range after.List(ctx, "") {
			if err != nil {
				t.Fatalf("%s: list after the crash: %v", step, err)
			}
			rc, _, err := after.Get(ctx, o.Key)
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			data, _ := io.ReadAll(rc)
			rc.Close()
			got[o.Key] = string(data)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("after %s and a power cut (-acknowledged +found):\n%s", step, diff)
		}
	}
	body := func(s string) (io.Reader, int64) { return strings.NewReader(s), int64(len(s)) }
	r, n := body("segment")
	if _, err := c.PutIfAbsent(ctx, "d/0123", r, n); err != nil {
		t.Fatal(err)
	}
	want["d/0123"] = "segment"
	check("a create")
	r, n = body("manifest 1")
	v, err := c.Put(ctx, "m/pi/x.jsonl/head", r, n)
	if err != nil {
		t.Fatal(err)
	}
	want["m/pi/x.jsonl/head"] = "manifest 1"
	check("a put")
	r, n = body("manifest 2")
	if _, err := c.PutIfMatch(ctx, "m/pi/x.jsonl/head", r, n, v.ETag); err != nil {
		t.Fatal(err)
	}
	want["m/pi/x.jsonl/head"] = "manifest 2"
	check("a swap")
	if err := c.Delete(ctx, "m/pi/x.jsonl/head"); err != nil {
		t.Fatal(err)
	}
	delete(want, "m/pi/x.jsonl/head")
	check("a delete")
}

// casCounter is the child of TestDirClientSwapAcrossProcesses: it adds
// one to the counter object of the directory remote in $SESSCTL_TEST_DIR
// $SESSCTL_TEST_N times, each a read and a PutIfMatch, read again when
// another process changed it first. It exits 3 when a replacement was
// refused because another process held the object open (vfs.ErrInUse:
// wine, which lacks POSIX rename semantics).
func casCounter() int {
	c, err := replica.NewDirClient(os.Getenv("SESSCTL_TEST_DIR"), nil)
	if err != nil {
		return 2
	}
	n, _ := strconv.Atoi(os.Getenv("SESSCTL_TEST_N"))
	ctx := context.Background()
	for i := 0; i < n; {
		rc, info, err := c.Get(ctx, "counter")
		if err != nil {
			return 1
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		v, cerr := strconv.Atoi(string(data))
		if err != nil || cerr != nil {
			return 1
		}
		next := strconv.Itoa(v + 1)
		_, err = c.PutIfMatch(ctx, "counter", strings.NewReader(next), int64(len(next)), info.ETag)
		switch {
		case err == nil:
			i++
		case errors.Is(err, vfs.ErrInUse):
			return 3
		case !errors.Is(err, replica.ErrObjectChanged):
			return 1
		}
	}
	return 0
}

// Processes sharing a directory remote see its compare-and-swap as one:
// four of them each add one to a counter 25 times with PutIfMatch, and no
// increment is lost.
func TestDirClientSwapAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	putString(t, dirClient(t, dir, nil), "counter", "0")
	const procs, each = 4, 25
	var cmds []*exec.Cmd
	for range procs {
		cmd := testenv.Command("casCounter")
		cmd.Env = append(cmd.Env, "SESSCTL_TEST_DIR="+dir, "SESSCTL_TEST_N="+strconv.Itoa(each))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	inUse := false
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == 3 && testenv.UnderWine() {
				inUse = true
				continue
			}
			t.Errorf("child: %v", err)
		}
	}
	testenv.SkipUnderWineIf(t, inUse, testenv.WineRename)
	data, _, err := clienttest.Read(t, dirClient(t, dir, nil), "counter")
	if err != nil || string(data) != strconv.Itoa(procs*each) {
		t.Errorf("counter %q (%v), want %d", data, err, procs*each)
	}
}
