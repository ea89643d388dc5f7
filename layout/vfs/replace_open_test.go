package vfs_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout/vfs"
)

// TestReplaceWhileOpen replaces a file that a reader and an appender hold
// open through the real filesystem, as a migration, repair or AgentUse
// rewrite does while pi or a sessctl reader has the session open. On
// Windows this works only because vfs opens with delete sharing and
// renames with POSIX semantics; on every system the reader goes on
// reading the old file and a new open sees the new one. Under wine, which
// has no POSIX rename, the replace fails with ErrInUse and must lose
// nothing.
func TestReplaceWhileOpen(t *testing.T) {
	t.Parallel()
	fsys := vfs.OS()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	must(t, os.WriteFile(p, []byte("old\n"), vfs.FileMode))
	r, err := vfs.OpenRegular(p)
	must(t, err)
	defer r.Close()
	rf, err := fsys.OpenFile(p, os.O_RDONLY, 0)
	must(t, err)
	defer rf.Close()
	a, err := fsys.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	defer a.Close()

	err = vfs.WriteFileAtomic(fsys, p, []byte("new\n"), vfs.FileMode)
	if err != nil && errors.Is(err, vfs.ErrInUse) && testenv.UnderWine() {
		// Wine renames only with MoveFileEx, which refuses to replace an
		// open file: the replace must then fail and lose nothing.
		if got, err := os.ReadFile(p); err != nil || string(got) != "old\n" {
			t.Errorf("after the refused replace: %q, %v; want the old file", got, err)
		}
		if ents, err := os.ReadDir(filepath.Dir(p)); err != nil || len(ents) != 1 {
			t.Errorf("directory holds %d entries (%v), want only the file", len(ents), err)
		}
		testenv.SkipUnderWine(t, "SetFileInformationByHandle(FileRenameInfoEx) with FILE_RENAME_FLAG_POSIX_SEMANTICS, so replacing an open file fails (with ErrInUse, the file intact: checked)")
	}
	must(t, err)

	for name, f := range map[string]io.Reader{"OpenRegular": r, "FS.OpenFile": rf} {
		if got, err := io.ReadAll(f); err != nil || string(got) != "old\n" {
			t.Errorf("%s handle opened before the replace reads %q, %v; want the old file", name, got, err)
		}
	}
	if got, err := vfs.ReadFile(fsys, p); err != nil || string(got) != "new\n" {
		t.Errorf("after the replace: %q, %v", got, err)
	}
	must(t, vfs.WriteFileAtomicNoSync(fsys, p, []byte("newer\n"), vfs.FileMode))
	if got, err := os.ReadFile(p); err != nil || string(got) != "newer\n" {
		t.Errorf("after the second replace: %q, %v", got, err)
	}
	ents, err := os.ReadDir(filepath.Dir(p))
	must(t, err)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the file", len(ents))
	}
}

// TestSyncDir checks that SyncDir of the real filesystem succeeds on an
// existing directory: an fsync on POSIX, F_FULLFSYNC on macOS, nothing on
// Windows, which has no directory fsync (a FlushFileBuffers there would
// fail with access denied).
func TestSyncDir(t *testing.T) {
	t.Parallel()
	must(t, vfs.OS().SyncDir(t.TempDir()))
}
