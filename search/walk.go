package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// fileKind is what an indexed file is.
type fileKind uint8

const (
	fileJSONL     fileKind = iota + 1 // a JSONL session file
	fileAUSession                     // an AgentUse session.json
	fileAUMessage                     // an AgentUse message.json
	fileAUPart                        // an AgentUse part file
)

// found is a file of a store as the walk found it.
type found struct {
	path    string
	session string // the session file, or the AgentUse session directory
	kind    fileKind
	size    int64
	mtime   int64 // ns
	ino     uint64
	ctime   int64 // the inode's change time, ns; 0 where unknown
}

func (f *found) set(fi fs.FileInfo) { f.setAttr(vfs.AttrOf(fi)) }

func (f *found) setAttr(a vfs.Attr) {
	f.size, f.mtime, f.ino, f.ctime = a.Size, a.Mtime, a.ID, a.Ctime
}

// walkFS lists the files of the stores: a JSONL store's with
// engine.Store.Files, an AgentUse store's sessions with agentuse.Walk. A
// store whose root does not exist is an error matching fs.ErrNotExist;
// unreadable files and directories below a root are reported to warn and
// left out. With dc the directories are listed through it (dirCache).
func walkFS(ctx context.Context, fsys vfs.FS, stores []layout.Place, warn func(error), dc *dirCache) ([]found, error) {
	var out []found
	lister := fsys // what the walks list directories with
	if dc != nil {
		lister = dc
		out = make([]found, 0, dc.files()) // (else grown as they come)
	}
	if len(stores) > 1 {
		lister = &dirMemo{FS: lister, dirs: map[string]memoDir{}}
	}
	for _, st := range stores {
		root, err := filepath.Abs(st.Root)
		if err != nil {
			return nil, fmt.Errorf("search %s: %w", st.Root, err)
		}
		fi, err := fsys.Stat(root)
		if err != nil {
			return nil, fmt.Errorf("search %s: %w", root, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("search %s: not a directory", root)
		}
		switch st.Format {
		case layout.FormatJSONL:
			err = walkJSONL(ctx, lister, fsys, root, &out, warn)
		case layout.FormatAgentUse:
			err = walkAgentUse(ctx, lister, fsys, root, &out, warn)
		default:
			err = fmt.Errorf("search %s: unknown store format %d", root, st.Format)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// walkJSONL finds the session files below root, as engine.Store.Files
// does for every command that walks a store, and stats them all at once,
// in parallel: a store of many small directories is as quick to compare
// with the index as one large one. What the walk left out is reported to
// warn. Directories are listed through lister, files stat'ed through
// fsys.
func walkJSONL(ctx context.Context, lister, fsys vfs.FS, root string, out *[]found, warn func(error)) error {
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: root, FS: lister})
	if err != nil {
		return fmt.Errorf("search %s: %w", root, err)
	}
	// The files are put in out as they are listed, then stat'ed where
	// they are: a store's 50,000 are not held twice.
	base := len(*out)
	var links []int // the files that are symbolic links, in out
	for f, err := range st.Files(ctx) {
		switch {
		case err == nil:
			if f.Link {
				links = append(links, len(*out))
			}
			*out = append(*out, found{path: f.Path, session: f.Path, kind: fileJSONL})
		case f.Path != "":
			warn(err) // left out by the walk
		case ctx.Err() != nil:
			return err
		default:
			return fmt.Errorf("search %s: %w", root, err)
		}
	}
	files := (*out)[base:]
	isLink := func(i int) bool {
		_, ok := slices.BinarySearch(links, base+i)
		return ok
	}
	// A file that cannot be stat'ed keeps its path and is given no
	// size: missing, left out; else its error is reported.
	type failed struct {
		i   int
		err error
	}
	stat := func(lo, hi int) (fails []failed) {
		record := func(i int, a vfs.Attr, err error) {
			if err == nil && !a.Mode.IsRegular() {
				err = errors.New("not a regular file")
			}
			if err != nil {
				f := failed{i: i}
				if !errors.Is(err, fs.ErrNotExist) || isLink(i) {
					f.err = fmt.Errorf("stat %s: %w", files[i].path, err)
				}
				fails = append(fails, f)
				return
			}
			files[i].setAttr(a)
		}
		// The files of a directory come one after another: each run is
		// stat'ed at its directory (vfs.LstatNames).
		var names []string
		for i := lo; i < hi; {
			dir, _ := filepath.Split(files[i].path)
			names = names[:0]
			j := i
			for ; j < hi && !isLink(j); j++ {
				name, ok := strings.CutPrefix(files[j].path, dir)
				if !ok || name == "" || strings.ContainsRune(name, filepath.Separator) {
					break
				}
				names = append(names, name)
			}
			if j > i {
				vfs.LstatNames(fsys, dir, names, func(k int, a vfs.Attr, err error) { record(i+k, a, err) })
				i = j
				continue
			}
			// A link (followed: the walk was told to) or a path of
			// another form, alone.
			stat := fsys.Lstat
			if isLink(i) {
				stat = fsys.Stat
			}
			fi, err := stat(files[i].path)
			var a vfs.Attr
			if err == nil {
				a = vfs.AttrOf(fi)
			}
			record(i, a, err)
			i++
		}
		return fails
	}
	var fails []failed
	if n := runtime.GOMAXPROCS(0); len(files) >= 256 && n > 1 {
		parts := make([][]failed, n)
		var wg sync.WaitGroup
		for k := range n {
			wg.Go(func() { parts[k] = stat(len(files)*k/n, len(files)*(k+1)/n) })
		}
		wg.Wait()
		fails = slices.Concat(parts...) // in the files' order
	} else {
		fails = stat(0, len(files))
	}
	if len(fails) == 0 {
		return nil
	}
	kept, next := base, 0
	for i := range files {
		if next < len(fails) && fails[next].i == i {
			if err := fails[next].err; err != nil {
				warn(err)
			}
			next++
			continue
		}
		(*out)[kept] = files[i]
		kept++
	}
	clear((*out)[kept:])
	*out = (*out)[:kept]
	return nil
}

// walkAgentUse finds the sessions below root with agentuse.Walk (which
// reports to warn the directories it could not read and the
// session.json files and subagent directories it would not follow), and
// the files of each that are indexed: session.json, message.json and
// part/*.json. What it passes over in a session is reported to warn too,
// each naming its path: a directory that cannot be read, and a symbolic
// link (never followed: a message directory that is one is not searched)
// or a named pipe or other special file, where a file or directory is
// expected. The walk lists directories through lister.
func walkAgentUse(ctx context.Context, lister, fsys vfs.FS, root string, out *[]found, warn func(error)) error {
	for d, err := range agentuse.Walk(ctx, lister, root) {
		if err != nil {
			if d == nil && ctx.Err() != nil {
				return ctx.Err()
			}
			var pe *fs.PathError
			switch {
			case !errors.As(err, &pe):
				return fmt.Errorf("search %s: %w", root, err)
			case pe.Path == root:
				return fmt.Errorf("search %s: %w", root, pe) // the root could not be read
			}
			warn(err)
			continue
		}
		auSessionFiles(fsys, d, out, warn)
	}
	return nil
}

// auSessionFiles adds the indexed files of the AgentUse session d.
func auSessionFiles(fsys vfs.FS, d *agentuse.Dir, out *[]found, warn func(error)) {
	add := func(p string, kind fileKind) {
		fi, err := fsys.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			switch {
			case err != nil && !errors.Is(err, fs.ErrNotExist):
				warn(fmt.Errorf("stat %s: %w", p, err))
			case err == nil:
				warnNotFollowed(p, fs.FileInfoToDirEntry(fi), warn)
			}
			return
		}
		f := found{path: p, session: d.Path, kind: kind}
		f.set(fi)
		*out = append(*out, f)
	}
	add(filepath.Join(d.Path, layout.AgentUseSessionFile), fileAUSession)
	for _, e := range d.Entries {
		sub := filepath.Join(d.Path, e.Name())
		if e.Name() == layout.AgentUseSubagentDir && (e.IsDir() || e.Type()&fs.ModeSymlink != 0) {
			continue // the walk's: nested sessions, or a link it reported
		}
		if !e.IsDir() {
			if !e.Type().IsRegular() {
				warnNotFollowed(sub, e, warn)
			}
			continue
		}
		// A message directory: message.json and part/*.json.
		add(filepath.Join(sub, layout.AgentUseMessageFile), fileAUMessage)
		pdir := filepath.Join(sub, layout.AgentUsePartDir)
		parts, err := fsys.ReadDir(pdir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				warn(fmt.Errorf("read directory %s: %w", pdir, unwrapPath(err, pdir)))
			}
			continue
		}
		for _, p := range parts {
			if !layout.IsAgentUseDataFile(p.Name()) {
				continue
			}
			if p.Type().IsRegular() {
				add(filepath.Join(pdir, p.Name()), fileAUPart)
			} else if !p.IsDir() {
				warnNotFollowed(filepath.Join(pdir, p.Name()), p, warn)
			}
		}
	}
}

// dirMemo is an FS whose ReadDir lists each directory once: the walks of
// a directory given as a store of both formats (a --store DIR: its
// session files and its AgentUse sessions) list the same directories,
// and the second is given the first's listing, taken moments before.
type dirMemo struct {
	vfs.FS
	mu   sync.Mutex
	dirs map[string]memoDir
}

type memoDir struct {
	ents []fs.DirEntry
	err  error
}

// ReadDir returns the listing of name, read at its first call; each
// caller gets a slice of its own (the walks sort theirs).
func (m *dirMemo) ReadDir(name string) ([]fs.DirEntry, error) {
	m.mu.Lock()
	d, ok := m.dirs[name]
	m.mu.Unlock()
	if !ok {
		d.ents, d.err = m.FS.ReadDir(name)
		m.mu.Lock()
		m.dirs[name] = d
		m.mu.Unlock()
	}
	return slices.Clone(d.ents), d.err
}

// warnNotFollowed reports a symbolic link or special file of an AgentUse
// session that is passed over.
func warnNotFollowed(path string, d fs.DirEntry, warn func(error)) {
	why := vfs.ErrNotRegular
	if d.Type()&fs.ModeSymlink != 0 {
		why = errSymlink
	}
	warn(&fs.PathError{Op: "open", Path: path, Err: why})
}

// errSymlink is why a symbolic link in an AgentUse session is passed
// over: readers never follow one.
var errSymlink = errors.New("a symbolic link, not followed")

// unwrapPath returns the cause of an *fs.PathError about path, so that
// the path is named once.
func unwrapPath(err error, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return pe.Err
	}
	return err
}

// racy is how recent a modification time must be for a file to be
// checked again at the next search even when its size and time are
// unchanged: a write within the filesystem's time granularity could
// otherwise go unnoticed.
const racy = 2 * time.Second

// isUnder reports whether path is root or lies below it (a root that
// ends in a separator, as "/" does, holds every path it starts). It
// makes no string: a search asks it of each of 50,000 paths.
func isUnder(path, root string) bool {
	rest, ok := strings.CutPrefix(path, root)
	return ok && (rest == "" || rest[0] == filepath.Separator || strings.HasSuffix(root, string(filepath.Separator)))
}
