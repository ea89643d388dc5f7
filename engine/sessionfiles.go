package engine

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout/vfs"
)

// storeFiles walks the directory tree at root with the rules of
// Store.Files, and returns its session files, sorted by path, and what it
// had to leave out, in the order of the walk. root itself must be a
// directory that can be read: otherwise its error is returned (matching
// fs.ErrNotExist when it is missing).
func storeFiles(ctx context.Context, fsys vfs.FS, root string) (files []File, skipped []error, err error) {
	dirs, skipped, err := walkStore(ctx, root, func(dir string) (dirFiles, error) {
		return sessionFiles(fsys, dir, false)
	})
	if err != nil {
		return nil, nil, err
	}
	n := 0
	for _, d := range dirs {
		n += len(d.names)
	}
	files = make([]File, 0, n)
	for _, d := range dirs {
		// d.dir is clean and a name one component: their join is
		// filepath.Join's, without its Clean of every path.
		dir := d.dir
		if !strings.HasSuffix(dir, string(filepath.Separator)) {
			dir += string(filepath.Separator)
		}
		for i, name := range d.names {
			files = append(files, File{Path: dir + name, Link: d.links[i]})
		}
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files, skipped, nil
}

// walkStore is the walk of Store.Files: read lists one directory
// (sessionFiles, or the listing's sessionFilesIndexed, which also reads
// its list index). It returns the directories that hold session files or special
// files, and as skipped the directories below root that could not be
// read and the special files, in the order of the walk.
//
// A directory's subdirectories are listed on as many CPUs as there are
// (read is called from several goroutines at once), their results put
// together in the walk's order: a store of many cwds is listed in about
// the time of one CPU's share of them.
func walkStore(ctx context.Context, root string, read func(dir string) (dirFiles, error)) (dirs []dirFiles, skipped []error, err error) {
	type walked struct {
		dirs    []dirFiles
		skipped []error
		err     error
	}
	sem := make(chan struct{}, max(runtime.GOMAXPROCS(0)-1, 0)) // the goroutines besides the caller's
	var walk func(dir string) walked
	walk = func(dir string) (w walked) {
		if err := ctx.Err(); err != nil {
			w.err = err
			return w
		}
		files, err := read(dir)
		if err != nil {
			if dir == root {
				w.err = err
				return w
			}
			w.skipped = append(w.skipped, readDirError(dir, err))
			return w
		}
		if len(files.names) > 0 || len(files.special) > 0 {
			w.dirs = append(w.dirs, files)
		}
		for _, name := range files.special {
			w.skipped = append(w.skipped, &fs.PathError{Op: "open", Path: filepath.Join(dir, name), Err: vfs.ErrNotRegular})
		}
		subs := slices.DeleteFunc(files.subdirs, func(s string) bool { return s == sessionfile.TrashDirName })
		res := make([]walked, len(subs))
		var wg sync.WaitGroup
		for i, sub := range subs {
			select {
			case sem <- struct{}{}:
				wg.Go(func() {
					defer func() { <-sem }()
					res[i] = walk(filepath.Join(dir, sub))
				})
			default:
				res[i] = walk(filepath.Join(dir, sub))
			}
		}
		wg.Wait()
		for _, r := range res {
			if r.err != nil {
				w.err = r.err
				return w
			}
			w.dirs = append(w.dirs, r.dirs...)
			w.skipped = append(w.skipped, r.skipped...)
		}
		return w
	}
	w := walk(root)
	if w.err != nil {
		return nil, nil, w.err
	}
	return w.dirs, w.skipped, nil
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

// yieldWalk yields a walk's files (in path order, as storeFiles gives
// them) and what it left out, in path order. With nothing left out the
// files are yielded as they are, without a second sort.
func yieldWalk(files []File, skipped []error, yield func(File, error) bool) {
	if len(skipped) == 0 {
		for _, f := range files {
			if !yield(f, nil) {
				return
			}
		}
		return
	}
	type item struct {
		f   File
		err error
	}
	items := make([]item, 0, len(files)+len(skipped))
	for _, f := range files {
		items = append(items, item{f: f})
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
