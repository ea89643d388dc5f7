package search

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
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

// watchDirs returns every directory below the roots that the walks read
// (symbolic links to directories are not followed, .trash directories
// are left out), sorted; ok is false when the watch cannot cover the
// stores: a symbolic link among their entries (its target's changes
// would go unseen), more than maxWatchDirs directories, or a directory
// that could not be read.
func watchDirs(roots []string) (dirs []string, ok bool) {
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				return errLinkInStore
			case !d.IsDir():
				return nil
			case p != root && d.Name() == ".trash":
				return filepath.SkipDir
			}
			if dirs = append(dirs, p); len(dirs) > maxWatchDirs {
				return errLinkInStore
			}
			return nil
		})
		if err != nil {
			return nil, false
		}
	}
	sort.Strings(dirs)
	return dirs, true
}

// errLinkInStore stops watchDirs.
var errLinkInStore = &os.PathError{Op: "watch", Err: fs.ErrInvalid}

// storesKey names a set of stores for the watch's record of the last
// search that found the index current.
func storesKey(stores []Store) string {
	var b strings.Builder
	for _, s := range stores {
		b.WriteString(s.Format.String())
		b.WriteByte(0)
		b.WriteString(s.Root)
		b.WriteByte(0)
	}
	return b.String()
}
