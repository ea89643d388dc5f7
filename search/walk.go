package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/sessctl/sessctl/engine"
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

func (f *found) set(fi fs.FileInfo) {
	f.size, f.mtime, f.ino, f.ctime = fi.Size(), fi.ModTime().UnixNano(), vfs.FileID(fi), ctime(fi)
}

// walk lists the files of the stores. A store whose root does not exist
// is an error matching fs.ErrNotExist; unreadable files and directories
// below a root are reported to warn and left out.
func walk(ctx context.Context, stores []layout.Place, warn func(error)) ([]found, error) {
	var out []found
	for _, st := range stores {
		root, err := filepath.Abs(st.Root)
		if err != nil {
			return nil, fmt.Errorf("search %s: %w", st.Root, err)
		}
		fi, err := os.Stat(root)
		if err != nil {
			return nil, fmt.Errorf("search %s: %w", root, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("search %s: not a directory", root)
		}
		switch st.Format {
		case layout.FormatJSONL:
			err = walkJSONL(ctx, root, &out, warn)
		case layout.FormatAgentUse:
			err = walkAgentUse(ctx, root, root, &out, warn)
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
// warn.
func walkJSONL(ctx context.Context, root string, out *[]found, warn func(error)) error {
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: root})
	if err != nil {
		return fmt.Errorf("search %s: %w", root, err)
	}
	var files []engine.File
	for f, err := range st.Files(ctx) {
		switch {
		case err == nil:
			files = append(files, f)
		case f.Path != "":
			warn(err) // left out by the walk
		case ctx.Err() != nil:
			return err
		default:
			return fmt.Errorf("search %s: %w", root, err)
		}
	}
	res := make([]found, len(files))
	errs := make([]error, len(files))
	stat := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p := files[i].Path
			var fi fs.FileInfo
			var err error
			if files[i].Link {
				fi, err = os.Stat(p)
			} else {
				fi, err = os.Lstat(p)
			}
			if err == nil && !fi.Mode().IsRegular() {
				err = errors.New("not a regular file")
			}
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) || files[i].Link {
					errs[i] = fmt.Errorf("stat %s: %w", p, err)
				}
				continue
			}
			res[i] = found{path: p, session: p, kind: fileJSONL}
			res[i].set(fi)
		}
	}
	if n := runtime.GOMAXPROCS(0); len(files) >= 256 && n > 1 {
		var wg sync.WaitGroup
		for k := range n {
			wg.Go(func() { stat(len(files)*k/n, len(files)*(k+1)/n) })
		}
		wg.Wait()
	} else {
		stat(0, len(files))
	}
	for i := range res {
		if errs[i] != nil {
			warn(errs[i])
		} else if res[i].path != "" {
			*out = append(*out, res[i])
		}
	}
	return nil
}

// walkAgentUse follows AgentUse's discovery: a directory holding a
// regular session.json is a session; below a session only subagent/ is
// searched for sessions; below any other directory every subdirectory is.
// What it passes over is reported to warn, each naming its path: a
// directory that cannot be read, and in a session a symbolic link (never
// followed: a message directory that is one is not searched) or a named
// pipe or other special file, where a file or directory is expected.
func walkAgentUse(ctx context.Context, root, dir string, out *[]found, warn func(error)) error {
	ents, err := readDir(ctx, root, dir, warn)
	if err != nil || len(ents) == 0 {
		return err
	}
	isSession := false
	for _, d := range ents {
		if d.Name() == layout.AgentUseSessionFile {
			if d.Type().IsRegular() {
				isSession = true
			} else if !d.IsDir() {
				warnNotFollowed(filepath.Join(dir, d.Name()), d, warn)
			}
		}
	}
	if !isSession {
		for _, d := range ents {
			if d.IsDir() {
				if err := walkAgentUse(ctx, root, filepath.Join(dir, d.Name()), out, warn); err != nil {
					return err
				}
			}
		}
		return nil
	}
	add := func(p string, kind fileKind) {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			switch {
			case err != nil && !errors.Is(err, fs.ErrNotExist):
				warn(fmt.Errorf("stat %s: %w", p, err))
			case err == nil:
				warnNotFollowed(p, fs.FileInfoToDirEntry(fi), warn)
			}
			return
		}
		f := found{path: p, session: dir, kind: kind}
		f.set(fi)
		*out = append(*out, f)
	}
	add(filepath.Join(dir, layout.AgentUseSessionFile), fileAUSession)
	for _, d := range ents {
		sub := filepath.Join(dir, d.Name())
		if !d.IsDir() {
			if !d.Type().IsRegular() {
				warnNotFollowed(sub, d, warn)
			}
			continue
		}
		if d.Name() == layout.AgentUseSubagentDir {
			if err := walkAgentUse(ctx, root, sub, out, warn); err != nil {
				return err
			}
			continue
		}
		// A message directory: message.json and part/*.json.
		add(filepath.Join(sub, layout.AgentUseMessageFile), fileAUMessage)
		pdir := filepath.Join(sub, layout.AgentUsePartDir)
		parts, err := os.ReadDir(pdir)
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
	return nil
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

func isUnder(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// readDir lists dir, a directory of a store whose root is root. A root
// that cannot be read is an error; a directory below it is reported to
// warn and left out (no entries, no error).
func readDir(ctx context.Context, root, dir string, warn func(error)) ([]fs.DirEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		if dir == root {
			return nil, fmt.Errorf("search %s: %w", dir, err)
		}
		warn(fmt.Errorf("read directory %s: %w", dir, unwrapPath(err, dir)))
		return nil, nil
	}
	return ents, nil
}
