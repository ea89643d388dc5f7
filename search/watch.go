package search

import (
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
