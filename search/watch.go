package search

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// With Options.Watch, an Index kept open between searches watches the
// directories of the stores it searched (inotify, on Linux) and counts
// what happens in them. A search whose stores, watch count and shard
// generations are what they were when the last search found the index
// up to date, and that met nothing it could not read, skips the walk of
// the stores and the update: it only queries. Anything else (an event in
// a watched directory: a file written, created, removed, renamed or its
// attributes changed; a lost event; another process writing the index;
// a store the watch cannot cover) makes it walk and update as a search
// without Watch does. The watch costs no CPU while nothing happens: its
// goroutine waits in read(2).

// maxWatchDirs bounds the directories one Index watches; stores with
// more are walked at every search.
const maxWatchDirs = 20000

// watchAll watches every directory below the roots that the walks read
// (symbolic links to directories are not followed, .trash directories
// are left out), each before it is read, so that an entry made in it
// while the walk goes on raises an event; watches of directories no
// longer found are removed. It reports false, and removes every watch,
// when the watch cannot cover the stores: a symbolic link among their
// entries (its target's changes would go unseen), more than
// maxWatchDirs directories, a directory that could not be read or
// watched (the kernel's limit on watches, say).
func watchAll(w *watcher, roots []string) bool {
	seen := map[string]bool{}
	for _, root := range roots {
		err := vfs.WalkDir(vfs.OS(), root, func(p string, d fs.DirEntry, err error) error { // the watches are the kernel's, on the real files
			if err != nil {
				return err
			}
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				return errNoWatch
			case !d.IsDir():
				return nil
			case p != root && d.Name() == ".trash":
				return filepath.SkipDir
			case seen[p]:
				return nil
			}
			seen[p] = true
			if len(seen) > maxWatchDirs || !w.add(p) {
				return errNoWatch
			}
			return nil
		})
		if err != nil {
			w.keep(nil)
			return false
		}
	}
	w.keep(seen)
	return true
}

// errNoWatch stops watchAll.
var errNoWatch = errors.New("the stores cannot be watched")

// storesKey names a set of stores for the watch's record of the last
// search that found the index current.
func storesKey(stores []layout.Place) string {
	var b strings.Builder
	for _, s := range stores {
		b.WriteString(s.Format.String())
		b.WriteByte(0)
		b.WriteString(s.Root)
		b.WriteByte(0)
	}
	return b.String()
}

// walkedState is the file list of a watched Index's last walk, kept
// with the watch's record (watcher.mark) of what changed since it began,
// so that a search after files were only written to (pi appending) stats
// those files and not every file of the stores.
type walkedState struct {
	key   string
	files []found
	at    map[string]int // path -> index in files
}

// walkWatched lists the files of the stores for a search that updates
// the index, and returns the watch's count taken before it and whether
// the watch covers the stores. With a watch whose record since the last
// walk of the same stores names only files of that walk that were
// written to or had their attributes changed (and nothing made, removed
// or renamed, no event lost), it is that walk's list with those files
// stat'ed again; otherwise it walks the stores.
//
// When it is the last walk's list, changed names the files stat'ed again
// (restated is true): the others are as that walk found them.
func (x *Index) walkWatched(ctx context.Context, stores []layout.Place, warn func(error)) (files []found, gen uint64, watched bool, changed []string, restated bool, err error) {
	if x.w == nil {
		// No watch (a search in a new process): the directories are
		// listed through the listings kept from the last search.
		// A rebuild reads every directory.
		var dc *dirCache
		if !x.o.Rebuild || x.rebuilt {
			dc = openDirCache(x.fsys(), filepath.Join(x.ownDir(), ownDirsName))
		}
		files, err = walkFS(ctx, x.fsys(), stores, warn, dc)
		if err == nil && dc != nil {
			dc.save() // (not on a first build: there is no directory yet)
			x.dirs = dc
		}
		return files, 0, false, nil, false, err
	}
	// The count is taken, and the record begun, before the walk or the
	// stat: what changes from here on makes the next search look again.
	gen = x.w.generation()
	changed, ok := x.w.changes()
	x.w.mark()
	prev := x.walked
	x.walked = nil
	key := storesKey(stores)
	if ok && prev != nil && prev.key == key {
		if files, ok = restat(x.fsys(), prev, changed); ok {
			x.walked = &walkedState{key: key, files: files, at: prev.at}
			return files, gen, true, changed, true, nil
		}
	}
	watched = watchAll(x.w, roots(stores))
	warned := false
	files, err = walkFS(ctx, x.fsys(), stores, func(err error) {
		warned = true
		warn(err)
	}, nil)
	if err == nil && watched && !warned {
		at := make(map[string]int, len(files))
		for i := range files {
			at[files[i].path] = i
		}
		x.walked = &walkedState{key: key, files: files, at: at}
	}
	return files, gen, watched, nil, false, err
}

// restat returns prev's files with those named in changed stat'ed again,
// or false when one of them is not a JSONL session file among prev's
// (AgentUse's files are replaced, not written to, and what they hold
// says which sessions there are) or is no longer a regular file. prev is
// given up: its list is changed in place.
func restat(fsys vfs.FS, prev *walkedState, changed []string) ([]found, bool) {
	files := prev.files
	for _, p := range changed {
		i, ok := prev.at[p]
		if !ok || files[i].kind != fileJSONL {
			return nil, false
		}
		fi, err := fsys.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			return nil, false
		}
		files[i].set(fi)
	}
	return files, true
}
