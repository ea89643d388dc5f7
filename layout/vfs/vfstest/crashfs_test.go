package vfstest_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// dump returns vfstest.Dump of root, failing the test on an error.
func dump(t *testing.T, fsys vfs.FS, root string) map[string]string {
	t.Helper()
	out, err := vfstest.Dump(fsys, root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustWriteFile(t *testing.T, fsys vfs.FS, name, data string, sync bool) {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(f, data); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, fsys vfs.FS, name, data string, sync bool) {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(f, data); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// errShape is what an error says, without the paths: its type, the
// operation and the errno or sentinel it wraps.
func errShape(err error) string {
	if err == nil {
		return "<nil>"
	}
	var no syscall.Errno
	cause := "other: " + err.Error()
	switch {
	case errors.As(err, &no):
		cause = fmt.Sprintf("errno %d (%v)", int(no), no)
	case errors.Is(err, fs.ErrClosed):
		cause = "closed"
	case err == io.EOF:
		return "EOF"
	}
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return fmt.Sprintf("PathError op=%s %s", pe.Op, cause)
	case errors.As(err, &le):
		return fmt.Sprintf("LinkError op=%s %s", le.Op, cause)
	}
	return fmt.Sprintf("%T %s", err, cause)
}

// setupTree makes d/, d/f ("hello"), d/sub/ and d/sub/x under root.
func setupTree(t *testing.T, fsys vfs.FS, root string) {
	t.Helper()
	must(t, fsys.MkdirAll(filepath.Join(root, "d", "sub"), 0o700))
	mustWriteFile(t, fsys, filepath.Join(root, "d", "f"), "hello", true)
	mustWriteFile(t, fsys, filepath.Join(root, "d", "sub", "x"), "x", true)
}

// TestCrashFSErrorsMatchOS runs the same failing (and a few succeeding)
// operations on the real filesystem and on a CrashFS and compares the
// errors: type, operation and errno.
func TestCrashFSErrorsMatchOS(t *testing.T) {
	t.Parallel()
	testenv.SkipOnWindows(t, "CrashFS models the POSIX errors (ENOENT, ENOTDIR, EISDIR...), which Windows reports with other codes")
	type op func(fsys vfs.FS, p func(string) string) error
	open := func(name string, flag int) op {
		return func(fsys vfs.FS, p func(string) string) error {
			f, err := fsys.OpenFile(p(name), flag, 0o600)
			if err == nil {
				_ = f.Close()
			}
			return err
		}
	}
	onFile := func(name string, flag int, do func(f vfs.File) error) op {
		return func(fsys vfs.FS, p func(string) string) error {
			f, err := fsys.OpenFile(p(name), flag, 0o600)
			if err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			defer f.Close()
			return do(f)
		}
	}
	cases := []struct {
		name string
		op   op
	}{
		{"open missing", open("d/nope", os.O_RDONLY)},
		{"open in missing dir", open("d/nodir/f", os.O_WRONLY|os.O_CREATE)},
		{"create through a file", open("d/f/g", os.O_WRONLY|os.O_CREATE)},
		{"create exclusive existing", open("d/f", os.O_WRONLY|os.O_CREATE|os.O_EXCL)},
		{"create exclusive new", open("d/new", os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow)},
		{"open dir for writing", open("d/sub", os.O_WRONLY)},
		{"open dir read-only", open("d/sub", os.O_RDONLY)},
		{"read dir handle", onFile("d/sub", os.O_RDONLY, func(f vfs.File) error {
			_, err := f.Read(make([]byte, 4))
			return err
		})},
		{"read file", func(fsys vfs.FS, p func(string) string) error {
			_, err := fsys.ReadFile(p("d/f"))
			return err
		}},
		{"read missing file", func(fsys vfs.FS, p func(string) string) error {
			_, err := fsys.ReadFile(p("d/nope"))
			return err
		}},
		{"read directory as file", func(fsys vfs.FS, p func(string) string) error {
			_, err := fsys.ReadFile(p("d"))
			return err
		}},
		{"rename missing", func(fsys vfs.FS, p func(string) string) error {
			return fsys.Rename(p("d/nope"), p("d/g"))
		}},
		{"rename into missing dir", func(fsys vfs.FS, p func(string) string) error {
			return fsys.Rename(p("d/f"), p("d/nodir/g"))
		}},
		{"rename file over dir", func(fsys vfs.FS, p func(string) string) error {
			return fsys.Rename(p("d/f"), p("d/sub"))
		}},
		{"rename dir over file", func(fsys vfs.FS, p func(string) string) error {
			return fsys.Rename(p("d/sub"), p("d/f"))
		}},
		{"rename dir into itself", func(fsys vfs.FS, p func(string) string) error {
			return fsys.Rename(p("d/sub"), p("d/sub/inner"))
		}},
		{"rename onto itself", func(fsys vfs.FS, p func(string) string) error {
			return fsys.Rename(p("d/f"), p("d/f"))
		}},
		{"rename over file", func(fsys vfs.FS, p func(string) string) error {
			return fsys.Rename(p("d/sub/x"), p("d/f"))
		}},
		{"link existing target", func(fsys vfs.FS, p func(string) string) error {
			return fsys.Link(p("d/sub/x"), p("d/f"))
		}},
		{"link missing", func(fsys vfs.FS, p func(string) string) error {
			return fsys.Link(p("d/nope"), p("d/g"))
		}},
		{"link dir", func(fsys vfs.FS, p func(string) string) error {
			return fsys.Link(p("d/sub"), p("d/g"))
		}},
		{"link ok", func(fsys vfs.FS, p func(string) string) error {
			return fsys.Link(p("d/f"), p("d/g"))
		}},
		{"remove missing", func(fsys vfs.FS, p func(string) string) error {
			return fsys.Remove(p("d/nope"))
		}},
		{"remove non-empty dir", func(fsys vfs.FS, p func(string) string) error {
			return fsys.Remove(p("d/sub"))
		}},
		{"remove file", func(fsys vfs.FS, p func(string) string) error {
			return fsys.Remove(p("d/f"))
		}},
		{"mkdirall through file", func(fsys vfs.FS, p func(string) string) error {
			return fsys.MkdirAll(p("d/f/g"), 0o700)
		}},
		{"mkdirall existing", func(fsys vfs.FS, p func(string) string) error {
			return fsys.MkdirAll(p("d/sub"), 0o700)
		}},
		{"stat missing", func(fsys vfs.FS, p func(string) string) error {
			_, err := fsys.Stat(p("d/nope"))
			return err
		}},
		{"lstat through file", func(fsys vfs.FS, p func(string) string) error {
			_, err := fsys.Lstat(p("d/f/g"))
			return err
		}},
		{"readdir missing", func(fsys vfs.FS, p func(string) string) error {
			_, err := fsys.ReadDir(p("d/nope"))
			return err
		}},
		{"readdir file", func(fsys vfs.FS, p func(string) string) error {
			_, err := fsys.ReadDir(p("d/f"))
			return err
		}},
		{"syncdir missing", func(fsys vfs.FS, p func(string) string) error {
			return fsys.SyncDir(p("d/nope"))
		}},
		{"write read-only handle", onFile("d/f", os.O_RDONLY, func(f vfs.File) error {
			_, err := f.Write([]byte("x"))
			return err
		})},
		{"read write-only handle", onFile("d/f", os.O_WRONLY, func(f vfs.File) error {
			_, err := f.Read(make([]byte, 1))
			return err
		})},
		{"read at EOF", onFile("d/f", os.O_RDONLY, func(f vfs.File) error {
			if _, err := io.ReadAll(f); err != nil {
				return err
			}
			_, err := f.Read(make([]byte, 1))
			return err
		})},
		{"readat past end", onFile("d/f", os.O_RDONLY, func(f vfs.File) error {
			_, err := f.ReadAt(make([]byte, 10), 2)
			return err
		})},
		{"truncate read-only handle", onFile("d/f", os.O_RDONLY, func(f vfs.File) error {
			return f.Truncate(1)
		})},
		{"truncate negative", onFile("d/f", os.O_WRONLY, func(f vfs.File) error {
			return f.Truncate(-1)
		})},
		{"close twice", onFile("d/f", os.O_RDONLY, func(f vfs.File) error {
			if err := f.Close(); err != nil {
				return err
			}
			return f.Close()
		})},
		{"write after close", onFile("d/f", os.O_WRONLY, func(f vfs.File) error {
			_ = f.Close()
			_, err := f.Write([]byte("x"))
			return err
		})},
		{"sync after close", onFile("d/f", os.O_WRONLY, func(f vfs.File) error {
			_ = f.Close()
			return f.Sync()
		})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			osfs := vfs.OS()
			setupTree(t, osfs, root)
			want := errShape(tc.op(osfs, func(s string) string { return filepath.Join(root, s) }))

			cfs := vfstest.NewCrashFS()
			setupTree(t, cfs, "/r")
			got := errShape(tc.op(cfs, func(s string) string { return filepath.Join("/r", s) }))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error differs from the os package (-os +crashfs):\n%s", diff)
			}
			if diff := cmp.Diff(dump(t, osfs, root), dump(t, cfs, "/r")); diff != "" {
				t.Errorf("state differs from the os package (-os +crashfs):\n%s", diff)
			}
		})
	}
}

// TestCrashFSRandomOpsMatchOS runs seeded random sequences of operations on
// both filesystems and compares every error and the final trees.
func TestCrashFSRandomOpsMatchOS(t *testing.T) {
	t.Parallel()
	testenv.SkipOnWindows(t, "CrashFS models the POSIX errors (ENOENT, ENOTDIR, EISDIR...), which Windows reports with other codes")
	names := []string{"a", "b", "d/a", "d/b", "d", "e/f", "e"}
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			cfs := vfstest.NewCrashFS()
			must(t, cfs.MkdirAll("/r", 0o700))
			type side struct {
				fsys  vfs.FS
				root  string
				files map[int]vfs.File
			}
			sides := []*side{{vfs.OS(), root, map[int]vfs.File{}}, {cfs, "/r", map[int]vfs.File{}}}
			rng := rand.New(rand.NewPCG(seed, 0))
			for step := range 300 {
				kind := rng.IntN(12)
				n1 := names[rng.IntN(len(names))]
				n2 := names[rng.IntN(len(names))]
				h := rng.IntN(3)
				data := []byte(fmt.Sprintf("<%d>", step))
				off := int64(rng.IntN(12))
				flag := []int{os.O_RDONLY, os.O_WRONLY | os.O_CREATE, os.O_RDWR | os.O_CREATE | os.O_APPEND,
					os.O_WRONLY | os.O_CREATE | os.O_EXCL, os.O_RDWR | os.O_TRUNC}[rng.IntN(5)]
				var shapes []string
				var reads []string
				for _, s := range sides {
					p := func(n string) string { return filepath.Join(s.root, n) }
					var err error
					var read string
					switch kind {
					case 0:
						var f vfs.File
						if f, err = s.fsys.OpenFile(p(n1), flag, 0o600); err == nil {
							if old := s.files[h]; old != nil {
								_ = old.Close()
							}
							s.files[h] = f
						}
					case 1, 2:
						if f := s.files[h]; f != nil {
							_, err = f.Write(data)
						}
					case 3:
						if f := s.files[h]; f != nil {
							b := make([]byte, 5)
							var k int
							k, err = f.ReadAt(b, off)
							read = string(b[:k])
						}
					case 4:
						if f := s.files[h]; f != nil {
							err = f.Truncate(off)
						}
					case 5:
						if f := s.files[h]; f != nil {
							var st fs.FileInfo
							if st, err = f.Stat(); err == nil {
								read = fmt.Sprint(st.IsDir())
								if !st.IsDir() { // directory sizes depend on the filesystem
									read += fmt.Sprint(st.Size())
								}
							}
						}
					case 6:
						err = s.fsys.Rename(p(n1), p(n2))
					case 7:
						err = s.fsys.Link(p(n1), p(n2))
					case 8:
						err = s.fsys.Remove(p(n1))
					case 9:
						err = s.fsys.MkdirAll(p(n1), 0o700)
					case 10:
						var b []byte
						b, err = s.fsys.ReadFile(p(n1))
						read = string(b)
					case 11:
						if f := s.files[h]; f != nil {
							b := make([]byte, 3)
							var k int
							k, err = f.Read(b)
							read = string(b[:k])
						}
					}
					shapes = append(shapes, errShape(err))
					reads = append(reads, read)
				}
				if shapes[0] != shapes[1] || reads[0] != reads[1] {
					t.Fatalf("step %d (kind %d, %s, %s, flag %#x): os gave %s %q, crashfs gave %s %q",
						step, kind, n1, n2, flag, shapes[0], reads[0], shapes[1], reads[1])
				}
			}
			for _, s := range sides {
				for _, f := range s.files {
					_ = f.Close()
				}
			}
			if diff := cmp.Diff(dump(t, sides[0].fsys, root), dump(t, cfs, "/r")); diff != "" {
				t.Errorf("trees differ (-os +crashfs):\n%s", diff)
			}
		})
	}
}

// TestCrashFSDurability checks what the harshest crash (CrashClone(nil))
// keeps after each kind of change, synced or not.
func TestCrashFSDurability(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		do   func(t *testing.T, c *vfstest.CrashFS)
		want map[string]string
	}{
		{
			name: "new file without any sync",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				mustWriteFile(t, c, "/d/f", "data", false)
			},
			want: map[string]string{"d": "<dir>"},
		},
		{
			name: "file contents synced but not its name",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				mustWriteFile(t, c, "/d/f", "data", true)
			},
			want: map[string]string{"d": "<dir>"},
		},
		{
			name: "name synced but not the contents: an empty file",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				mustWriteFile(t, c, "/d/f", "data", false)
				must(t, c.SyncDir("/d"))
			},
			want: map[string]string{"d": "<dir>", "d/f": ""},
		},
		{
			name: "contents and name synced",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				mustWriteFile(t, c, "/d/f", "data", true)
				must(t, c.SyncDir("/d"))
			},
			want: map[string]string{"d": "<dir>", "d/f": "data"},
		},
		{
			name: "unsynced append is lost",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				mustWriteFile(t, c, "/d/f", "line1\n", true)
				must(t, c.SyncDir("/d"))
				appendFile(t, c, "/d/f", "line2\n", false)
			},
			want: map[string]string{"d": "<dir>", "d/f": "line1\n"},
		},
		{
			name: "unsynced truncate is lost",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				mustWriteFile(t, c, "/d/f", "line1\nli", true)
				must(t, c.SyncDir("/d"))
				f, err := c.OpenFile("/d/f", os.O_WRONLY, 0)
				must(t, err)
				must(t, f.Truncate(6))
				must(t, f.Close())
			},
			want: map[string]string{"d": "<dir>", "d/f": "line1\nli"},
		},
		{
			name: "rename without directory sync stays at the old name",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				mustWriteFile(t, c, "/d/tmp", "new", true)
				must(t, c.SyncDir("/d"))
				must(t, c.Rename("/d/tmp", "/d/f"))
			},
			want: map[string]string{"d": "<dir>", "d/tmp": "new"},
		},
		{
			name: "rename with directory sync",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				mustWriteFile(t, c, "/d/f", "old", true)
				mustWriteFile(t, c, "/d/tmp", "new", true)
				must(t, c.SyncDir("/d"))
				must(t, c.Rename("/d/tmp", "/d/f"))
				must(t, c.SyncDir("/d"))
			},
			want: map[string]string{"d": "<dir>", "d/f": "new"},
		},
		{
			name: "remove without directory sync",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				mustWriteFile(t, c, "/d/f", "data", true)
				must(t, c.SyncDir("/d"))
				must(t, c.Remove("/d/f"))
			},
			want: map[string]string{"d": "<dir>", "d/f": "data"},
		},
		{
			name: "link with directory sync shares the file",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				mustWriteFile(t, c, "/d/f", "data", true)
				must(t, c.Link("/d/f", "/d/g"))
				must(t, c.SyncDir("/d"))
				appendFile(t, c, "/d/g", "+more", true)
			},
			want: map[string]string{"d": "<dir>", "d/f": "data+more", "d/g": "data+more"},
		},
		{
			name: "new directory whose parent was not synced vanishes with its synced files",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				must(t, c.MkdirAll("/d/new/deeper", 0o700))
				mustWriteFile(t, c, "/d/new/deeper/f", "data", true)
				must(t, c.SyncDir("/d/new/deeper"))
				must(t, c.SyncDir("/d/new"))
			},
			want: map[string]string{"d": "<dir>"},
		},
		{
			name: "new directory with every parent synced",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				must(t, c.MkdirAll("/d/new/deeper", 0o700))
				mustWriteFile(t, c, "/d/new/deeper/f", "data", true)
				must(t, c.SyncDir("/d/new/deeper"))
				must(t, c.SyncDir("/d/new"))
				must(t, c.SyncDir("/d"))
			},
			want: map[string]string{"d": "<dir>", "d/new": "<dir>", "d/new/deeper": "<dir>", "d/new/deeper/f": "data"},
		},
		{
			name: "O_SYNC writes are durable",
			do: func(t *testing.T, c *vfstest.CrashFS) {
				f, err := c.OpenFile("/d/f", os.O_WRONLY|os.O_CREATE|os.O_SYNC, 0o600)
				must(t, err)
				_, err = f.Write([]byte("synced"))
				must(t, err)
				must(t, f.Close())
				must(t, c.SyncDir("/d"))
			},
			want: map[string]string{"d": "<dir>", "d/f": "synced"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := vfstest.NewCrashFS()
			must(t, c.MkdirAll("/d", 0o700))
			must(t, c.SyncDir("/"))
			tc.do(t, c)
			before := dump(t, c, "/")
			got := c.CrashClone(nil)
			if diff := cmp.Diff(tc.want, dump(t, got, "/")); diff != "" {
				t.Errorf("after crash (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, dump(t, c, "/")); diff != "" {
				t.Errorf("CrashClone changed the original (-before +after):\n%s", diff)
			}
			if u := got.Unsynced(); len(u) != 0 {
				t.Errorf("crash clone has unsynced paths %q; everything in it is durable", u)
			}
		})
	}
}

// TestCrashFSRandomCrashes checks the outcomes a random crash may give:
// torn appends keep a prefix, renames are atomic, directory changes
// survive in order, and every outcome does occur.
func TestCrashFSRandomCrashes(t *testing.T) {
	t.Parallel()
	t.Run("torn append keeps a prefix", func(t *testing.T) {
		t.Parallel()
		c := vfstest.NewCrashFS()
		mustWriteFile(t, c, "/f", "synced|", true)
		must(t, c.SyncDir("/"))
		appendFile(t, c, "/f", "appended-bytes", false)
		seen := map[string]bool{}
		for seed := range uint64(300) {
			got, err := c.CrashClone(rand.New(rand.NewPCG(seed, 1))).ReadFile("/f")
			must(t, err)
			full := "synced|appended-bytes"
			if len(got) < len("synced|") || string(got) != full[:len(got)] {
				t.Fatalf("seed %d: crash left %q, not a prefix of %q holding the synced part", seed, got, full)
			}
			switch len(got) {
			case len("synced|"):
				seen["synced only"] = true
			case len(full):
				seen["all"] = true
			default:
				seen["torn"] = true
			}
		}
		if diff := cmp.Diff(map[string]bool{"synced only": true, "all": true, "torn": true}, seen); diff != "" {
			t.Errorf("outcomes seen (-want +got):\n%s", diff)
		}
	})
	t.Run("rename is atomic", func(t *testing.T) {
		t.Parallel()
		c := vfstest.NewCrashFS()
		must(t, c.MkdirAll("/d", 0o700))
		must(t, c.SyncDir("/"))
		mustWriteFile(t, c, "/d/old", "x", true)
		mustWriteFile(t, c, "/d/other", "y", true)
		must(t, c.SyncDir("/d"))
		must(t, c.Rename("/d/old", "/d/new"))
		must(t, c.Remove("/d/other"))
		mustWriteFile(t, c, "/d/later", "z", true)
		seen := map[string]bool{}
		for seed := range uint64(200) {
			got := dump(t, c.CrashClone(rand.New(rand.NewPCG(seed, 2))), "/")
			_, o := got["d/old"]
			_, n := got["d/new"]
			if o == n {
				t.Fatalf("seed %d: old present %v, new present %v: %v", seed, o, n, got)
			}
			seen[fmt.Sprint(o)] = true
		}
		if len(seen) != 2 {
			t.Errorf("only one outcome of the rename occurred: %v", seen)
		}
	})
	t.Run("directory changes survive in order", func(t *testing.T) {
		t.Parallel()
		c := vfstest.NewCrashFS()
		must(t, c.MkdirAll("/d", 0o700))
		must(t, c.SyncDir("/"))
		for _, n := range []string{"1", "2", "3"} {
			mustWriteFile(t, c, "/d/"+n, n, true)
		}
		seen := map[string]bool{}
		for seed := range uint64(200) {
			got := dump(t, c.CrashClone(rand.New(rand.NewPCG(seed, 3))), "/d")
			var names []string
			for n := range got {
				names = append(names, n)
			}
			slices.Sort(names)
			s := fmt.Sprint(names)
			switch s {
			case "[]", "[1]", "[1 2]", "[1 2 3]":
				seen[s] = true
			default:
				t.Fatalf("seed %d: crash kept %s, which is not a prefix of the creations", seed, s)
			}
		}
		if len(seen) != 4 {
			t.Errorf("outcomes seen: %v, want all four prefixes", seen)
		}
	})
	t.Run("same seed gives the same state", func(t *testing.T) {
		t.Parallel()
		c := vfstest.NewCrashFS()
		for i := range 20 {
			dir := fmt.Sprintf("/d%d", i%3)
			must(t, c.MkdirAll(dir, 0o700))
			mustWriteFile(t, c, fmt.Sprintf("%s/f%d", dir, i), fmt.Sprint("data", i), i%2 == 0)
			if i%5 == 0 {
				must(t, c.SyncDir(dir))
			}
		}
		a := dump(t, c.CrashClone(rand.New(rand.NewPCG(7, 7))), "/")
		b := dump(t, c.CrashClone(rand.New(rand.NewPCG(7, 7))), "/")
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("two crashes with the same seed differ:\n%s", diff)
		}
	})
}

// TestCrashFSCloneIsIndependent checks that the clone and the original
// do not share contents and that open handles keep working on the
// original.
func TestCrashFSCloneIsIndependent(t *testing.T) {
	t.Parallel()
	c := vfstest.NewCrashFS()
	f, err := c.OpenFile("/f", os.O_RDWR|os.O_CREATE, 0o600)
	must(t, err)
	_, err = f.Write([]byte("abc"))
	must(t, err)
	must(t, f.Sync())
	must(t, c.SyncDir("/"))
	clone := c.CrashClone(nil)
	_, err = f.Write([]byte("def"))
	must(t, err)
	must(t, f.Close())
	appendFile(t, clone, "/f", "XYZ", true)
	if diff := cmp.Diff(map[string]string{"f": "abcdef"}, dump(t, c, "/")); diff != "" {
		t.Errorf("original (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"f": "abcXYZ"}, dump(t, clone, "/")); diff != "" {
		t.Errorf("clone (-want +got):\n%s", diff)
	}
}

func TestCrashFSUnsynced(t *testing.T) {
	t.Parallel()
	c := vfstest.NewCrashFS()
	must(t, c.MkdirAll("/a/b", 0o700))
	mustWriteFile(t, c, "/a/b/f", "x", false)
	mustWriteFile(t, c, "/a/g", "y", true)
	want := []string{"/", "/a", "/a/b", "/a/b/f"}
	if diff := cmp.Diff(want, c.Unsynced()); diff != "" {
		t.Errorf("Unsynced (-want +got):\n%s", diff)
	}
	for _, d := range []string{"/", "/a", "/a/b"} {
		must(t, c.SyncDir(d))
	}
	if diff := cmp.Diff([]string{"/a/b/f"}, c.Unsynced()); diff != "" {
		t.Errorf("Unsynced after SyncDir (-want +got):\n%s", diff)
	}
}

// TestSameFile checks vfs.SameFile on both filesystems: hard links are
// the same file, equal contents are not, and a name replaced by rename
// names another file.
func TestSameFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		fsys vfs.FS
		root string
	}{
		{"os", vfs.OS(), t.TempDir()},
		{"crashfs", vfstest.NewCrashFS(), "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := func(n string) string { return filepath.Join(tc.root, n) }
			c := tc.fsys
			mustWriteFile(t, c, p("f"), "x", true)
			must(t, c.Link(p("f"), p("g")))
			mustWriteFile(t, c, p("h"), "x", true)
			st := func(n string) fs.FileInfo {
				fi, err := c.Stat(p(n))
				must(t, err)
				return fi
			}
			f := st("f")
			if !vfs.SameFile(f, st("g")) {
				t.Error("a hard link is not the same file")
			}
			if vfs.SameFile(f, st("h")) {
				t.Error("two files with the same contents are the same file")
			}
			must(t, c.Rename(p("h"), p("f")))
			if vfs.SameFile(f, st("f")) {
				t.Error("a file replaced by rename is still the same file")
			}
			if !vfs.SameFile(f, st("g")) {
				t.Error("the link lost its identity after the rename")
			}
		})
	}
}

// TestCrashFSConcurrent appends from many goroutines, some through one
// shared O_APPEND handle and some through their own, and checks that no
// write is lost or interleaved (run with -race).
func TestCrashFSConcurrent(t *testing.T) {
	t.Parallel()
	c := vfstest.NewCrashFS()
	shared, err := c.OpenFile("/log", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	must(t, err)
	var wg sync.WaitGroup
	const workers, lines = 8, 50
	for w := range workers {
		wg.Go(func() {
			f := shared
			if w%2 == 1 {
				own, err := c.OpenFile("/log", os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Error(err)
					return
				}
				defer own.Close()
				f = own
			}
			for i := range lines {
				if _, err := fmt.Fprintf(f, "w%d-%03d\n", w, i); err != nil {
					t.Error(err)
				}
				if i%10 == 0 {
					_ = f.Sync()
					_, _ = c.Stat("/log")
					_ = c.CrashClone(nil)
				}
			}
		})
	}
	wg.Wait()
	must(t, shared.Close())
	data, err := c.ReadFile("/log")
	must(t, err)
	got := splitLines(string(data))
	var want []string
	for w := range workers {
		for i := range lines {
			want = append(want, fmt.Sprintf("w%d-%03d", w, i))
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}

// TestCrashFSPaths checks that relative and unclean names reach the same
// files as clean absolute ones.
func TestCrashFSPaths(t *testing.T) {
	t.Parallel()
	c := vfstest.NewCrashFS()
	must(t, c.MkdirAll("a/b", 0o700))
	mustWriteFile(t, c, "/a/./b/../b/f", "x", true)
	names := []string{"/a/b/f", "a/b/f", path.Join("/a", "..", "a", "b", "f")}
	if runtime.GOOS != "windows" { // where it would name the UNC share \\a\b
		names = append(names, "//a//b/f")
	}
	for _, n := range names {
		if b, err := c.ReadFile(n); err != nil || string(b) != "x" {
			t.Errorf("ReadFile(%q) = %q, %v", n, b, err)
		}
	}
	fi, err := c.Stat("/")
	must(t, err)
	if !fi.IsDir() {
		t.Error("the root is not a directory")
	}
	if err := c.Remove("/"); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("Remove(/) = %v, want EBUSY", err)
	}
}
