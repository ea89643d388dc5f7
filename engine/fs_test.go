package engine_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// TestAppendThroughFSSeam appends through a filesystem other than the OS
// one. The append path checks that the file is still the one it opened;
// with os.SameFile that check failed for every FileInfo the os package did
// not make, so no session on a CrashFS could take a second line.
func TestAppendThroughFSSeam(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		meddle  func(t *testing.T, fsys vfs.FS, file string)
		wantErr error
	}{
		{name: "untouched file", meddle: func(*testing.T, vfs.FS, string) {}},
		{name: "file replaced behind the writer", wantErr: engine.ErrVanished,
			meddle: func(t *testing.T, fsys vfs.FS, file string) {
				data, err := fsys.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if err := vfs.WriteFileAtomic(fsys, file, data, vfs.FileMode); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "file removed behind the writer", wantErr: engine.ErrVanished,
			meddle: func(t *testing.T, fsys vfs.FS, file string) {
				if err := fsys.Remove(file); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fsys := vfstest.NewCrashFS()
			clock := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			opts := engine.WithoutLock(engine.StoreOptions{FS: fsys, Dir: "/sessions", Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
			s, err := openStore(t, opts).Create(t.Context(), "/work", engine.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.AppendMessage(raw(`{"content":"first","role":"assistant"}`)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AppendMessage(raw(`{"content":"second","role":"user"}`)); err != nil {
				t.Fatal(err)
			}
			tc.meddle(t, fsys, s.SessionFile())
			_, err = s.AppendMessage(raw(`{"content":"third","role":"user"}`))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("third append: got %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				return
			}
			r, err := openStore(t, engine.StoreOptions{FS: fsys}).Open(context.Background(), s.SessionFile(), engine.OpenOptions{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var got []string
			for _, e := range r.Entries() {
				msg, _ := e.Field("message")
				c, _ := jsonl.Lookup(msg, "content")
				s, _ := jsonl.String(c)
				got = append(got, s)
			}
			if diff := cmp.Diff([]string{"first", "second", "third"}, got); diff != "" {
				t.Errorf("entries on disk (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSessionInNewDirectorySurvivesPowerCut creates sessions in a
// directory that does not exist yet and checks that an acknowledged entry
// survives the harshest crash. Creating the directory without syncing its
// parent lost the directory, and every session in it, on a power cut.
func TestSessionInNewDirectorySurvivesPowerCut(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		open func(ctx context.Context, st *engine.Store) (*engine.Session, error)
	}{
		{"create", func(ctx context.Context, st *engine.Store) (*engine.Session, error) {
			return st.Create(ctx, "/work", engine.CreateOptions{})
		}},
		{"open a new path with a new dir", func(ctx context.Context, st *engine.Store) (*engine.Session, error) {
			return st.Open(ctx, "/base/other/new.jsonl", engine.OpenOptions{Create: true, Cwd: "/work", Dir: "/base/sessions/deeper"})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fsys := vfstest.NewCrashFS()
			if err := fsys.MkdirAll("/base", vfs.DirMode); err != nil {
				t.Fatal(err)
			}
			if err := fsys.SyncDir("/"); err != nil {
				t.Fatal(err)
			}
			st := openStore(t, engine.WithoutLock(engine.StoreOptions{FS: fsys, Dir: "/base/sessions/deeper"}))
			s, err := tc.open(t.Context(), st)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			id, err := s.AppendMessage(raw(`{"content":"kept","role":"assistant"}`))
			if err != nil {
				t.Fatal(err)
			}
			after := fsys.CrashClone(nil)
			r, err := openStore(t, engine.StoreOptions{FS: after}).Open(t.Context(), s.SessionFile(), engine.OpenOptions{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, ok := r.Entry(id); !ok {
				t.Errorf("acknowledged entry %s lost in a power cut; on disk: %d entries", id, len(r.Entries()))
			}
		})
	}
}

// TestReopenMakesTheFileNameDurable creates a session whose directory
// sync fails after the rename, reopens it and appends. The append syncs
// only the file; unless the open synced the directory, the file's name
// (and every acknowledged entry in it) was lost in a power cut.
func TestReopenMakesTheFileNameDurable(t *testing.T) {
	t.Parallel()
	disk := vfstest.NewCrashFS()
	if err := vfs.MkdirAllSync(disk, "/sessions", vfs.DirMode); err != nil {
		t.Fatal(err)
	}
	ffs := vfstest.NewFaultFS(disk)
	opts := engine.WithoutLock(engine.StoreOptions{FS: ffs, Dir: "/sessions"})
	s, err := openStore(t, opts).Create(t.Context(), "/work", engine.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ffs.Inject(vfstest.Fault{Op: vfstest.OpSyncDir, Err: syscall.EIO})
	if _, err := s.AppendMessage(raw(`{"content":"unacknowledged","role":"assistant"}`)); !errors.Is(err, syscall.EIO) {
		t.Fatalf("first append: %v, want the injected EIO", err)
	}
	file := s.SessionFile()
	_ = s.Close()

	r, err := openStore(t, opts).Open(t.Context(), file, engine.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	id, err := r.AppendMessage(raw(`{"content":"acknowledged","role":"user"}`))
	if err != nil {
		t.Fatal(err)
	}
	after := disk.CrashClone(nil)
	c, err := openStore(t, engine.StoreOptions{FS: after}).Open(t.Context(), file, engine.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.Entry(id); !ok {
		t.Errorf("acknowledged entry lost in a power cut: the file has %d entries after it", len(c.Entries()))
	}
}
