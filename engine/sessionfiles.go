package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// StoreFile is a session file of a store, as StoreFiles found it.
type StoreFile struct {
	// Path is root joined with the file's place below it.
	Path string
	// Link is set when the name is a symbolic link. The walk does not
	// follow it; readers may read through it (pi lists such files), but
	// writers refuse it (vfs.ErrSymlink).
	Link bool
}

// StoreFiles walks the directory tree at root, a session store or any
// directory of session files, and returns its session files and what it
// had to leave out. It is the one place that decides what belongs to a
// store: listing a tree, id lookup, verify, stats, migrate, search and
// sync all walk a store through it, so they agree on its files.
//
//   - A session file is a name ending in ".jsonl" that is a regular file
//     or a symbolic link. sessctl's own files beside a session never end
//     so, and are never session files: migration backups
//     (<file>.v<N>.bak), quarantined torn tails (<file>.torn-<ms>),
//     temporary files (<name>.tmp-<hex>), the lock (<file>.lock) and its
//     owner record (<file>.owner).
//   - Directories named ".trash" below root, where deleted sessions are
//     kept, are left out (name a .trash directory as root to walk it).
//     Symbolic links to directories are not followed.
//   - A name ending in ".jsonl" that is a named pipe, socket or device
//     is left out and reported in skipped (an *fs.PathError matching
//     vfs.ErrNotRegular), and so is each directory below root that could
//     not be read (the error of reading it, naming it). Opening a named
//     pipe would wait for a writer forever.
//
// Files are sorted by path; skipped is in the order of the walk. root
// itself must be a directory that can be read: otherwise its error is
// returned (matching fs.ErrNotExist when it is missing). A nil fsys means
// vfs.OS().
func StoreFiles(ctx context.Context, fsys vfs.FS, root string) (files []StoreFile, skipped []error, err error) {
	fsys = orOS(fsys)
	dirs, skipped, err := walkStore(ctx, root, func(dir string) (dirFiles, error) {
		return sessionFiles(fsys, dir, false)
	})
	if err != nil {
		return nil, nil, err
	}
	for _, d := range dirs {
		for i, name := range d.names {
			files = append(files, StoreFile{Path: filepath.Join(d.dir, name), Link: d.links[i]})
		}
	}
	slices.SortFunc(files, func(a, b StoreFile) int { return strings.Compare(a.Path, b.Path) })
	return files, skipped, nil
}

// walkStore is StoreFiles' walk: read lists one directory (sessionFiles,
// or the listing's sessionFilesIndexed, which also reads its list
// index). It returns the directories that hold session files or special
// files, and as skipped the directories below root that could not be
// read and the special files, in the order of the walk.
func walkStore(ctx context.Context, root string, read func(dir string) (dirFiles, error)) (dirs []dirFiles, skipped []error, err error) {
	var walk func(dir string) error
	walk = func(dir string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		files, err := read(dir)
		if err != nil {
			if dir == root {
				return err
			}
			skipped = append(skipped, readDirError(dir, err))
			return nil
		}
		if len(files.names) > 0 || len(files.special) > 0 {
			dirs = append(dirs, files)
		}
		for _, name := range files.special {
			skipped = append(skipped, &fs.PathError{Op: "open", Path: filepath.Join(dir, name), Err: vfs.ErrNotRegular})
		}
		for _, sub := range files.subdirs {
			if sub == trashDirName {
				continue
			}
			if err := walk(filepath.Join(dir, sub)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return nil, nil, err
	}
	return dirs, skipped, nil
}

// readDirError is the error of a directory below a store's root that could
// not be read: an *fs.PathError naming it once.
func readDirError(dir string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == dir {
		err = pe.Err
	}
	return &fs.PathError{Op: "read directory", Path: dir, Err: err}
}

// trashDirName is the directory 'sessctl delete' moves sessions into
// (see TrashDir); store walks leave it out.
const trashDirName = ".trash"

// SessionFilesIn expands paths as 'sessctl migrate' does: a file as it
// is (whatever its type: the command that reads it says what is wrong
// with it), a directory to its session files as StoreFiles finds them.
// skipped lists what StoreFiles left out of the directories. A path that
// does not exist fails with ErrNotFound.
func SessionFilesIn(ctx context.Context, paths []string) (files []string, skipped []error, err error) {
	fsys := vfs.OS()
	for _, p := range paths {
		st, err := fsys.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil, fmt.Errorf("%s: %w", p, ErrNotFound)
			}
			return nil, nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		found, skip, err := StoreFiles(ctx, fsys, p)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range found {
			files = append(files, f.Path)
		}
		skipped = append(skipped, skip...)
	}
	return files, skipped, nil
}

// ErrSessionOwned is matched by the error of CheckOutput for a path
// that belongs to a session.
var ErrSessionOwned = errors.New("only the session's writer writes the files of a session")

// CheckOutput returns an error matching ErrSessionOwned when path names
// a file that belongs to a session, which nothing but the session's
// writer may create, write or replace: an existing session file
// (*.jsonl), its writer lock (<file>.lock, <file>.lock.excl), the lock's
// owner record (<file>.owner), a migration backup (<file>.v<N>.bak), a
// quarantined torn line (<file>.torn-<ms>), a temporary file of
// sessctl's writes (see TempFiles), or anything inside an AgentUse
// session directory (one named <ULID>-<agent> holding session.json or
// sessctl's session.lock). Names are judged whether or not the file
// exists, and whether or not its session does: replacing a live lock file
// lets a second writer in. A path where nothing of a session is found
// gives nil; the caller still decides whether to replace what is there.
func CheckOutput(path string, opts Options) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if what := sessionOwned(opts.fs(), abs); what != "" {
		return fmt.Errorf("write %s: it is %s (%w)", path, what, ErrSessionOwned)
	}
	return nil
}

// sessionOwned names what the file at abs is to a session, or "".
func sessionOwned(fsys vfs.FS, abs string) string {
	dir, name := filepath.Split(abs)
	if layout.IsSessionFileName(name) {
		if st, err := fsys.Lstat(abs); err == nil && st.Mode().IsRegular() {
			return "a session file"
		}
	}
	for i := 0; ; {
		k := strings.Index(name[i:], ".jsonl.")
		if k < 0 {
			break
		}
		base := name[:i+k+len(".jsonl")]
		session := filepath.Join(dir, base)
		switch rest := name[len(base)+1:]; {
		case rest == "lock" || rest == "lock.excl":
			return "the writer lock of session " + session
		case rest == "owner":
			return "the lock owner record of session " + session
		case isSessionTemp(base, name):
			return "a temporary file of session " + session
		case strings.HasPrefix(rest, "torn-"):
			if isSessionSidecar(base, name) {
				return "a quarantined torn line of session " + session
			}
		case isSessionSidecar(base, name):
			return "a migration backup of session " + session
		}
		i += k + 1
	}
	for d := abs; ; {
		if _, _, ok := layout.SplitAgentUseDirName(filepath.Base(d)); ok {
			for _, f := range []string{layout.AgentUseSessionFile, layout.AgentUseLockFile} {
				if _, err := fsys.Lstat(filepath.Join(d, f)); err == nil {
					if d == abs {
						return "an AgentUse session directory"
					}
					return "in AgentUse session directory " + d
				}
			}
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}

// yieldWalk yields a walk's files and what it left out, in path order.
func yieldWalk(files []StoreFile, skipped []error, yield func(File, error) bool) {
	type item struct {
		f   File
		err error
	}
	items := make([]item, 0, len(files)+len(skipped))
	for _, f := range files {
		items = append(items, item{f: File{Path: f.Path, Link: f.Link}})
	}
	for _, err := range skipped {
		var pe *fs.PathError
		p := ""
		if errors.As(err, &pe) {
			p = pe.Path
		}
		items = append(items, item{f: File{Path: p}, err: err})
	}
	slices.SortStableFunc(items, func(a, b item) int { return strings.Compare(a.f.Path, b.f.Path) })
	for _, it := range items {
		if !yield(it.f, it.err) {
			return
		}
	}
}
