package repair

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/lock"
)

// Leftover is a file a writer left beside a session file that does not
// exist: the lock file, owner record or temporary files of a session
// whose writer was killed before its first write, or whose file was
// removed behind its back.
type Leftover struct {
	// Path is the file, Session the session file it belongs to.
	Path, Session string
	// Held is true while a live writer holds the session's lock (or, for
	// a temporary file, wrote it within the last minute): the file is
	// that writer's, not a leftover yet.
	Held bool
}

// Leftovers walks the directories below root (symbolic links are not
// followed, a ".trash" directory is passed over) and returns the
// leftovers it finds, sorted by path. It writes nothing and takes no
// lock; a session whose lock is held at the moment is reported Held.
func Leftovers(ctx context.Context, root string) ([]Leftover, error) {
	fsys := vfs.OS()
	var out []Leftover
	var walk func(dir string) error
	walk = func(dir string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ents, err := fsys.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("look for leftovers in %s: %w", dir, err)
		}
		names := make(map[string]bool, len(ents))
		for _, e := range ents {
			names[e.Name()] = true
		}
		held := map[string]bool{} // session -> its lock is held
		for _, e := range ents {
			name := e.Name()
			switch {
			case e.IsDir():
				if name == sessionfile.TrashDirName {
					continue
				}
				if err := walk(filepath.Join(dir, name)); err != nil {
					return err
				}
				continue
			case !e.Type().IsRegular():
				continue
			}
			base, ok := leftoverOf(name)
			if !ok || names[base] {
				continue
			}
			session := filepath.Join(dir, base)
			h, seen := held[session]
			if !seen {
				st, err := lock.Inspect(sessionfile.LockPath(session))
				h = err == nil && st.Locked
				held[session] = h
			}
			// A temporary file written within the last minute may be the
			// output of a command that takes no lock (repair -o, export
			// -o) still writing it.
			young := false
			if sessionfile.IsTemp(base, name) {
				if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) < youngTemp {
					young = true
				}
			}
			out = append(out, Leftover{Path: filepath.Join(dir, name), Session: session, Held: h || young})
		}
		return nil
	}
	if err := walk(root); err != nil {
		return out, err
	}
	slices.SortFunc(out, func(a, b Leftover) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// youngTemp is how recently a temporary file may have been written for
// Leftovers to count it as a write still going on.
const youngTemp = time.Minute

// leftoverOf returns the session file name a lock, owner or temporary
// file name belongs to.
func leftoverOf(name string) (base string, ok bool) {
	i := strings.Index(name, ".jsonl.")
	if i < 0 {
		return "", false
	}
	base, rest := name[:i+len(".jsonl")], name[i+len(".jsonl."):]
	if rest == "lock" || rest == "owner" || sessionfile.IsTemp(base, name) {
		return base, true
	}
	return "", false
}

// ClearLeftovers removes the leftovers Leftovers finds below root that
// provably belong to no live writer: for each session it takes the
// session's writer lock (which fails while a writer holds it), removes
// the session's temporary files and owner record, and then, still
// holding it, the lock file. A session that appeared meanwhile keeps
// everything. It returns the files it removed, and the leftovers it left
// because a writer holds them.
func ClearLeftovers(ctx context.Context, root string) (removed []string, held []Leftover, err error) {
	found, err := Leftovers(ctx, root)
	if err != nil {
		return nil, nil, err
	}
	fsys := vfs.OS()
	bySession := map[string][]Leftover{}
	var order []string
	for _, l := range found {
		if _, ok := bySession[l.Session]; !ok {
			order = append(order, l.Session)
		}
		bySession[l.Session] = append(bySession[l.Session], l)
	}
	for _, session := range order {
		lk, lerr := sessionfile.Acquire(ctx, session, sessionfile.LockOptions{Command: "sessctl repair", Mode: "repair"})
		if errors.Is(lerr, lock.ErrLocked) {
			held = append(held, bySession[session]...)
			continue
		}
		if lerr != nil {
			err = errors.Join(err, lerr)
			continue
		}
		if _, serr := fsys.Lstat(session); !errors.Is(serr, fs.ErrNotExist) {
			_ = lk.Close() // the session was written meanwhile: all is its own
			continue
		}
		for _, l := range bySession[session] {
			if strings.HasSuffix(l.Path, ".lock") || strings.HasSuffix(l.Path, ".owner") {
				continue // the lock's own files go with lk.Remove
			}
			if l.Held {
				held = append(held, l) // a young temporary file
				continue
			}
			if rerr := fsys.Remove(l.Path); rerr == nil {
				removed = append(removed, l.Path)
			} else if !errors.Is(rerr, fs.ErrNotExist) {
				err = errors.Join(err, fmt.Errorf("remove %s: %w", l.Path, rerr))
			}
		}
		// Remove takes away the owner record it wrote and the lock file;
		// a stale owner record of the killed writer is replaced by ours
		// when the lock is taken.
		gone, rerr := lk.Remove()
		if rerr != nil {
			err = errors.Join(err, rerr)
		}
		if gone {
			for _, l := range bySession[session] {
				if strings.HasSuffix(l.Path, ".lock") || strings.HasSuffix(l.Path, ".owner") {
					removed = append(removed, l.Path)
				}
			}
		}
	}
	slices.Sort(removed)
	return removed, held, err
}
