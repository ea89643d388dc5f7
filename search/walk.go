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

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// Format is the format of a session store.
type Format uint8

// The store formats.
const (
	// FormatJSONL is pi's and indusagi's JSONL session files (and the
	// sessions sessctl imports from other agents).
	FormatJSONL Format = iota + 1
	// FormatAgentUse is AgentUse's part/message directories.
	FormatAgentUse
)

// String returns "jsonl" or "agentuse".
func (f Format) String() string {
	switch f {
	case FormatJSONL:
		return "jsonl"
	case FormatAgentUse:
		return "agentuse"
	}
	return "unknown"
}

// Store is a place to search.
type Store struct {
	Format Format
	// Root is, for FormatJSONL, a directory whose session files (*.jsonl)
	// are searched, recursively (symbolic links to directories are not
	// followed, .trash directories are left out): pi's <agent
	// dir>/sessions, or any directory of session files. For
	// FormatAgentUse it is a project's session directory or any directory
	// above session directories (<data>/agentuse/project for every
	// project), searched as AgentUse discovers sessions.
	Root string
}

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
}

func (f *found) set(fi fs.FileInfo) {
	f.size, f.mtime, f.ino = fi.Size(), fi.ModTime().UnixNano(), vfs.FileID(fi)
}

// walk lists the files of the stores. A store whose root does not exist
// is an error matching fs.ErrNotExist; unreadable files and directories
// below a root are reported to warn and left out.
func walk(ctx context.Context, stores []Store, warn func(error)) ([]found, error) {
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
		case FormatJSONL:
			err = walkJSONL(ctx, root, &out, warn)
		case FormatAgentUse:
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

// sessionFile is a session file the walk found, not yet looked at.
type sessionFile struct {
	path string
	link bool // a symbolic link, read as list reads it
}

// walkJSONL finds the session files below root and stats them all at
// once, in parallel: a store of many small directories is as quick to
// compare with the index as one large one.
func walkJSONL(ctx context.Context, root string, out *[]found, warn func(error)) error {
	var files []sessionFile
	if err := listJSONL(ctx, root, root, &files, warn); err != nil {
		return err
	}
	res := make([]found, len(files))
	errs := make([]error, len(files))
	stat := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p := files[i].path
			var fi fs.FileInfo
			var err error
			if files[i].link {
				fi, err = os.Stat(p)
			} else {
				fi, err = os.Lstat(p)
			}
			if err == nil && !fi.Mode().IsRegular() {
				err = errors.New("not a regular file")
			}
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) || files[i].link {
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

// listJSONL adds the session files of dir and its subdirectories to
// files (.trash directories left out, symbolic links to directories not
// followed).
func listJSONL(ctx context.Context, root, dir string, files *[]sessionFile, warn func(error)) error {
	ents, err := readDir(ctx, root, dir, warn)
	if err != nil || len(ents) == 0 {
		return err
	}
	for _, d := range ents {
		switch {
		case d.IsDir():
			if d.Name() == ".trash" {
				continue
			}
			if err := listJSONL(ctx, root, filepath.Join(dir, d.Name()), files, warn); err != nil {
				return err
			}
		case layout.IsSessionFileName(d.Name()) && (d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0):
			*files = append(*files, sessionFile{path: filepath.Join(dir, d.Name()), link: d.Type()&fs.ModeSymlink != 0})
		}
	}
	return nil
}

// walkAgentUse follows AgentUse's discovery: a directory holding a
// regular session.json is a session; below a session only subagent/ is
// searched for sessions; below any other directory every subdirectory is.
func walkAgentUse(ctx context.Context, root, dir string, out *[]found, warn func(error)) error {
	ents, err := readDir(ctx, root, dir, warn)
	if err != nil || len(ents) == 0 {
		return err
	}
	isSession := false
	for _, d := range ents {
		if d.Name() == layout.AgentUseSessionFile && d.Type().IsRegular() {
			isSession = true
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
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				warn(fmt.Errorf("stat %s: %w", p, err))
			}
			return
		}
		f := found{path: p, session: dir, kind: kind}
		f.set(fi)
		*out = append(*out, f)
	}
	add(filepath.Join(dir, layout.AgentUseSessionFile), fileAUSession)
	for _, d := range ents {
		if !d.IsDir() {
			continue
		}
		sub := filepath.Join(dir, d.Name())
		if d.Name() == layout.AgentUseSubagentDir {
			if err := walkAgentUse(ctx, root, sub, out, warn); err != nil {
				return err
			}
			continue
		}
		// A message directory: message.json and part/*.json.
		add(filepath.Join(sub, layout.AgentUseMessageFile), fileAUMessage)
		parts, err := os.ReadDir(filepath.Join(sub, layout.AgentUsePartDir))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				warn(fmt.Errorf("read directory %s: %w", filepath.Join(sub, layout.AgentUsePartDir), err))
			}
			continue
		}
		for _, p := range parts {
			if p.Type().IsRegular() && layout.IsAgentUseDataFile(p.Name()) {
				add(filepath.Join(sub, layout.AgentUsePartDir, p.Name()), fileAUPart)
			}
		}
	}
	return nil
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
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == dir {
			err = pe.Err // the path is said once
		}
		warn(fmt.Errorf("read directory %s: %w", dir, err))
		return nil, nil
	}
	return ents, nil
}
