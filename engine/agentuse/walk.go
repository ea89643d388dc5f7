package agentuse

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"iter"
	"path/filepath"
	"slices"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// The one walk of AgentUse's directories. Walk finds the session
// directories below a root (AgentUse's discovery, spec section 7), and
// Store.Sessions, the search index, the viewer and sync all take their
// sessions from it; DirFiles lists the files of one session directory and
// Fingerprint sums such a listing up, for whoever must tell that a session
// changed (sync's fast path, the viewer's live pages).

// trashDirName is the directory deleted sessions are moved into
// (internal/sessionfile.TrashDirName): walks leave it out.
const trashDirName = ".trash"

// Dir is a session directory, as Walk finds it: a directory holding a
// regular file named session.json.
type Dir struct {
	Path string // absolute (a relative root is taken from the working directory)
	Rel  string // Path relative to the walk's root, '/'-separated; "" for the root itself
	// Parent is the innermost session whose subagent/ directory holds
	// this one; nil for a session that is not nested in another.
	Parent *Dir
	// Entries are the directory's entries as the walk read them, sorted
	// by name, so that a caller need not read it again.
	Entries []fs.DirEntry
}

// Nested reports whether the session was found inside another session's
// subagent/ directory.
func (d *Dir) Nested() bool { return d.Parent != nil }

// Walk returns an iterator over the session directories below root (root
// included), in directory order (names sorted), each session before the
// sessions nested in it. A directory that holds a regular session.json is
// a session, whatever its name; below a session only its subagent/
// directory is searched, at any depth; below any other directory every
// subdirectory is, but for .trash directories. Symbolic links are never
// followed. fsys nil means vfs.OS().
//
// What is passed over is yielded as a nil Dir and an error naming its
// path, and the walk goes on: a directory below root that cannot be read
// (an *fs.PathError with Op "read directory"), a session.json that is a
// symbolic link or not a regular file (its directory is then not a
// session), a subagent/ that is a symbolic link. A missing root yields
// nothing; an error reading root, or ctx done, is yielded last.
func Walk(ctx context.Context, fsys vfs.FS, root string) iter.Seq2[*Dir, error] {
	return walkSeq(ctx, fsys, root, false)
}

// WalkDirs is Walk for whoever keeps session directories whole, files
// it cannot read left out (sync): a directory whose session.json is
// there but is a symbolic link or not a regular file (a named pipe),
// which Walk passes over, is yielded as a session directory together
// with the error that tells why Walk passes it over (both non-nil), and
// is searched below as a session is (its subagent/ directory only).
// Everything else is as Walk yields it.
func WalkDirs(ctx context.Context, fsys vfs.FS, root string) iter.Seq2[*Dir, error] {
	return walkSeq(ctx, fsys, root, true)
}

// walkSeq is Walk, or WalkDirs when keep is set.
func walkSeq(ctx context.Context, fsys vfs.FS, root string, keep bool) iter.Seq2[*Dir, error] {
	return func(yield func(*Dir, error) bool) {
		visit := func(d, _ *Dir, err error) bool { return yield(d, err) }
		err := walkTree(ctx, fsys, root, keep, visit)
		if err != nil && err != errStop {
			yield(nil, err)
		}
	}
}

// walkDirs is Walk with a callback: visit is called with each session
// directory, or with a nil one, the innermost session around it (nil when
// none) and the error of something passed over. It returns an error
// reading root, ctx's error, or errStop when visit returned false.
func walkDirs(ctx context.Context, fsys vfs.FS, root string, visit func(d, in *Dir, err error) bool) error {
	return walkTree(ctx, fsys, root, false, visit)
}

// walkTree is walkDirs; with keep set, a directory whose session.json is
// a symbolic link or a special file is visited as a session, with the
// error why Walk passes it over (see WalkDirs).
func walkTree(ctx context.Context, fsys vfs.FS, root string, keep bool, visit func(d, in *Dir, err error) bool) error {
	if fsys == nil {
		fsys = vfs.OS()
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("list sessions: %w", err)
	}
	root = abs
	var walk func(dir, rel string, parent *Dir) error
	walk = func(dir, rel string, parent *Dir) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ents, err := fsys.ReadDir(dir)
		if err != nil {
			if dir == root {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return fmt.Errorf("list sessions: %w", err)
			}
			return skip(visit, parent, readDirError(dir, err))
		}
		slices.SortFunc(ents, func(a, b fs.DirEntry) int { return compareNames(a.Name(), b.Name()) })
		isSession := false
		var bad error // why session.json is passed over
		if i, ok := slices.BinarySearchFunc(ents, layout.AgentUseSessionFile, func(e fs.DirEntry, n string) int { return compareNames(e.Name(), n) }); ok {
			e := ents[i]
			switch {
			case e.Type().IsRegular():
				isSession = true
			case e.Type()&fs.ModeSymlink != 0:
				bad = &fs.PathError{Op: "open", Path: filepath.Join(dir, e.Name()), Err: errSymlink}
			case !e.IsDir():
				bad = &fs.PathError{Op: "open", Path: filepath.Join(dir, e.Name()), Err: vfs.ErrNotRegular}
			}
		}
		if bad != nil && !keep {
			if err := skip(visit, parent, bad); err != nil {
				return err
			}
		}
		isSession = isSession || (bad != nil && keep)
		if !isSession {
			for _, e := range ents {
				if e.IsDir() && e.Name() != trashDirName {
					if err := walk(filepath.Join(dir, e.Name()), joinRel(rel, e.Name()), parent); err != nil {
						return err
					}
				}
			}
			return nil
		}
		d := &Dir{Path: dir, Rel: rel, Parent: parent, Entries: ents}
		if !visit(d, nil, bad) {
			return errStop
		}
		for _, e := range ents {
			if e.Name() != layout.AgentUseSubagentDir {
				continue
			}
			sub := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir():
				return walk(sub, joinRel(rel, e.Name()), d)
			case e.Type()&fs.ModeSymlink != 0:
				return skip(visit, d, &fs.PathError{Op: "open", Path: sub, Err: errSymlink})
			}
		}
		return nil
	}
	return walk(root, "", nil)
}

// skip tells visit of something passed over inside in.
func skip(visit func(d, in *Dir, err error) bool, in *Dir, err error) error {
	if !visit(nil, in, err) {
		return errStop
	}
	return nil
}

// compareNames is the byte order of names, as os.ReadDir sorts them.
func compareNames(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// DirFile is one file of a session directory, as DirFiles lists it.
type DirFile struct {
	Rel     string      // relative to the session directory, '/'-separated
	Mode    fs.FileMode // as Lstat gives it: a symbolic link is listed, never followed
	Size    int64
	ModTime int64 // in ns since the epoch
}

// DirFiles lists every file below the session directory dir that is not
// a directory, sorted by Rel: regular files, and symbolic links and
// special files, which are listed and never followed or read (Mode says
// which). The sessions nested in dir's subagent/ directory are left out
// unless subagents is set. Each directory below dir that cannot be read
// is an error in skipped naming it (an *fs.PathError with Op "read
// directory"), and so is a file that cannot be stat'ed; a file removed
// meanwhile is left out. An error reading dir itself is returned. fsys
// nil means vfs.OS().
func DirFiles(ctx context.Context, fsys vfs.FS, dir string, subagents bool) (files []DirFile, skipped []error, err error) {
	if fsys == nil {
		fsys = vfs.OS()
	}
	var walk func(d, rel string) error
	walk = func(d, rel string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ents, err := fsys.ReadDir(d)
		if err != nil {
			if rel == "" {
				return fmt.Errorf("list %s: %w", d, err)
			}
			skipped = append(skipped, readDirError(d, err))
			return nil
		}
		for _, e := range ents {
			p := filepath.Join(d, e.Name())
			switch {
			case rel == "" && e.Name() == layout.AgentUseSubagentDir && e.IsDir() && !subagents:
			case e.IsDir():
				if err := walk(p, joinRel(rel, e.Name())); err != nil {
					return err
				}
			default:
				fi, err := fsys.Lstat(p)
				if err != nil {
					if !errors.Is(err, fs.ErrNotExist) {
						skipped = append(skipped, err)
					}
					continue
				}
				files = append(files, DirFile{Rel: joinRel(rel, e.Name()), Mode: fi.Mode(), Size: fi.Size(), ModTime: fi.ModTime().UnixNano()})
			}
		}
		return nil
	}
	if err := walk(dir, ""); err != nil {
		return nil, nil, err
	}
	slices.SortFunc(files, func(a, b DirFile) int { return compareNames(a.Rel, b.Rel) })
	return files, skipped, nil
}

// Fingerprint returns the total size of files and a fingerprint of their
// names, sizes and modification times, in their order (FNV-1a, 63 bits,
// never negative): a listing that differs in any of them almost surely
// has another fingerprint. It is what sync records of a session directory
// for its fast path, so its value must not change between releases.
func Fingerprint(files []DirFile) (size, print int64) {
	h := fnv.New64a()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", f.Rel, f.Size, f.ModTime)
		size += f.Size
	}
	return size, int64(h.Sum64() >> 1)
}
