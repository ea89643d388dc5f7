package render_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
)

// TestCreateOutput checks that an export file appears whole on Commit and
// not at all on Abort, that an existing file is replaced only when asked,
// and that a session file, the source and a directory never are.
func TestCreateOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	source := filepath.Join(dir, "s.jsonl")
	header := `{"type":"session","version":3,"id":"x","timestamp":"2026-03-01T09:00:00.000Z","cwd":"/w"}` + "\n"
	other := filepath.Join(dir, "other.jsonl")
	for _, f := range []string{source, other} {
		if err := os.WriteFile(f, []byte(header), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out.md")
	write := func(replace bool, commit bool) error {
		t.Helper()
		o, err := render.CreateOutput(nil, out, source, replace)
		if err != nil {
			return err
		}
		if _, err := o.Write([]byte("doc\n")); err != nil {
			t.Fatal(err)
		}
		if !commit {
			o.Abort()
			return nil
		}
		return o.Commit()
	}
	if err := write(false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Abort: %v; want no file", err)
	}
	if err := write(false, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "doc\n" {
		t.Errorf("after Commit: %q", b)
	}
	if err := write(false, true); !errors.Is(err, render.ErrOutputExists) {
		t.Errorf("an existing file without replace: %v; want ErrOutputExists", err)
	}
	if err := write(true, true); err != nil {
		t.Errorf("an existing file with replace: %v", err)
	}
	for target, why := range map[string]string{
		source:                        "the session being exported",
		other:                         "a session file",
		dir:                           "a directory",
		filepath.Join(dir, "no", "x"): "does not exist",
	} {
		if _, err := render.CreateOutput(nil, target, source, true); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("CreateOutput(%s): %v; want an error saying %q", target, err, why)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// TestCreateOutputFaults fails the export's write, sync and rename
// through a FaultFS: each gives an error naming the target, the file it
// was to replace keeps its bytes, and no temporary file is left.
func TestCreateOutputFaults(t *testing.T) {
	t.Parallel()
	for _, op := range []vfstest.Op{vfstest.OpWrite, vfstest.OpSync, vfstest.OpRename} {
		t.Run(op.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out := filepath.Join(dir, "out.md")
			if err := os.WriteFile(out, []byte("old\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			ffs := vfstest.NewFaultFS(vfs.OS())
			o, err := render.CreateOutput(ffs, out, filepath.Join(dir, "s.jsonl"), true)
			if err != nil {
				t.Fatal(err)
			}
			ffs.Inject(vfstest.Fault{Op: op, Err: syscall.ENOSPC})
			_, err = o.Write([]byte("new\n"))
			if err == nil {
				err = o.Commit()
			} else {
				o.Abort()
			}
			if !errors.Is(err, syscall.ENOSPC) || (op != vfstest.OpWrite && !strings.Contains(err.Error(), out)) {
				t.Errorf("export with a failing %s: %v, want ENOSPC naming %s", op, err, out)
			}
			if b, _ := os.ReadFile(out); string(b) != "old\n" {
				t.Errorf("the file to replace holds %q", b)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Errorf("left in the directory: %v", ents)
			}
		})
	}
}
