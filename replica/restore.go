package replica

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// errRestoreExists is returned by restore when the session file appeared
// before it could be written (another sync): the caller merges into it.
var errRestoreExists = errors.New("the session file exists")

// restore writes a session the store does not have from its remote copy,
// into pi's directory for its (mapped) cwd: the header and the complete
// entry lines (see classify; the others are returned as refused). The
// segments are streamed into a temporary file beside the session file,
// which takes its name, under the session's writer lock, only when every
// segment passed its checks: memory holds a line at a time, never the
// session. It returns the path, the number of entry lines written and
// the file's size; errRestoreExists (with the path) when the file exists.
//
// Its steps are the methods of piRestore: start (at the header), entry
// (each entry line), writeTemp and place.
func (r *Remote) restore(ctx context.Context, name string, man *Manifest) (path string, n int, size int64, refused []RefusedLine, err error) {
	if len(man.Segments) == 0 {
		return "", 0, 0, nil, fmt.Errorf("restore %s: the remote copy is empty: %w", name, ErrCorruptRemote)
	}
	rs := &piRestore{r: r, ctx: ctx, name: name, fsys: r.opts.fs(), ids: map[string][32]byte{}}
	defer rs.cleanup()
	for i, s := range man.Segments {
		var startErr error
		err := r.scanSegment(ctx, s, i == 0, func(k lineKind, line []byte, e *jsonl.Entry, ln int, why string) {
			if startErr != nil {
				return
			}
			switch k {
			case lineHeader:
				startErr = rs.start(line)
			case lineRefused:
				if i == 0 && ln == 1 {
					rs.noHeader = true
				}
				rs.refused = append(rs.refused, RefusedLine{Object: s.Object, Line: ln, Reason: why})
			case lineEntry:
				rs.entry(s, line, e, ln)
			}
		})
		switch {
		case startErr != nil:
			return rs.path, 0, 0, nil, startErr
		case err != nil:
			return "", 0, 0, nil, err
		case i == 0 && (rs.noHeader || rs.f == nil):
			return "", 0, 0, nil, fmt.Errorf("restore %s: the remote copy does not start with a complete session header line: %w", name, ErrCorruptRemote)
		}
	}
	if len(rs.refused) > 0 && !rs.assistant {
		// pi (0.73.1 and earlier) writes a loaded session without an
		// assistant message again, header included, at its next append.
		rs.refused[len(rs.refused)-1].Reason += "; what is restored holds no assistant message, and pi's next append to such a file writes the whole session again below it (a second header; pi's own bug)"
	}
	if err := rs.writeTemp(); err != nil {
		return "", 0, 0, nil, err
	}
	return rs.place()
}

// piRestore is one run of restore: the temporary file being written and
// what has gone into it.
type piRestore struct {
	r    *Remote
	ctx  context.Context
	name string
	fsys vfs.FS

	path      string
	tmp       string
	f         vfs.File
	w         *bufio.Writer
	werr      error
	unlock    func()
	noHeader  bool
	assistant bool                // an assistant message was written
	ids       map[string][32]byte // the entries written: id -> sha256 of the line
	refused   []RefusedLine
	size      int64
	n         int
}

// cleanup removes the temporary file left open and releases the lock.
func (rs *piRestore) cleanup() {
	if rs.f != nil {
		rs.f.Close()
		_ = rs.fsys.Remove(rs.tmp)
	}
	if rs.unlock != nil {
		rs.unlock()
	}
}

// start opens the temporary file once the header said where the
// session goes.
func (rs *piRestore) start(hdr []byte) error {
	r, ctx, name, fsys := rs.r, rs.ctx, rs.name, rs.fsys
	if err := sameSession("restore", name, headerID(hdr), ""); err != nil {
		return err
	}
	e, _ := jsonl.ParseEntry(hdr)
	cwd, _ := e.StringField("cwd")
	if mapped := r.opts.mapCwd(cwd); mapped != cwd {
		var err error
		if hdr, err = setMember(hdr, "cwd", string(jsonl.AppendString(nil, mapped))); err != nil {
			return fmt.Errorf("restore %s: %w", name, err)
		}
		cwd = mapped
	}
	if cwd == "" {
		return fmt.Errorf("restore %s: the header names no cwd: %w", name, ErrCorruptRemote)
	}
	path := filepath.Join(layout.ResolvePath(firstRoot(r.opts.jsonlRoots(), layout.SessionsDir(""))), layout.CwdDirName(layout.ResolvePath(cwd)), name)
	rs.path = path
	if err := vfs.MkdirAllSync(fsys, filepath.Dir(path), vfs.DirMode); err != nil {
		return fmt.Errorf("restore %s: %w", path, err)
	}
	lk, err := sessionfile.Acquire(ctx, path, sessionfile.LockOptions{Command: "sessctl sync", Mode: "sync", FS: r.opts.FS})
	if err != nil {
		return fmt.Errorf("restore %s: %w", path, err)
	}
	rs.unlock = func() {
		if _, err := fsys.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			_, _ = lk.Remove() // nothing was restored: no lock file stays
			return
		}
		_ = lk.Close()
	}
	if _, err := fsys.Lstat(path); err == nil {
		return errRestoreExists
	}
	rs.tmp = vfs.TempName(path)
	if rs.f, err = fsys.OpenFile(rs.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode); err != nil {
		rs.f = nil
		return fmt.Errorf("restore %s: %w", path, err)
	}
	rs.w = bufio.NewWriterSize(rs.f, 256<<10)
	_, rs.werr = rs.w.Write(hdr)
	_ = rs.w.WriteByte('\n')
	rs.size = int64(len(hdr)) + 1
	return nil
}

// entry writes an entry line of segment s (its line ln), or refuses it.
func (rs *piRestore) entry(s Segment, line []byte, e *jsonl.Entry, ln int) {
	ids := rs.ids
	if rs.f == nil {
		return
	}
	if e.ParentKind == jsonl.KindString && e.ParentID == e.ID {
		// pi never finishes loading an entry that is its own parent.
		rs.refused = append(rs.refused, RefusedLine{Object: s.Object, Line: ln, Reason: "entry " + e.ID + " is its own parent"})
		return
	}
	if _, dup := ids[e.ID]; dup {
		// The first line of an id is the entry; a copy with the
		// same bytes is dropped, one with others refused.
		if sum := sha256.Sum256(line); sum != ids[e.ID] {
			rs.refused = append(rs.refused, RefusedLine{Object: s.Object, Line: ln, Reason: "entry " + e.ID + " again, with other bytes"})
		}
		return
	}
	ids[e.ID] = sha256.Sum256(line)
	if e.Type == jsonl.TypeMessage && e.Role == "assistant" {
		rs.assistant = true
	}
	if _, err := rs.w.Write(line); err != nil && rs.werr == nil {
		rs.werr = err
	}
	_ = rs.w.WriteByte('\n')
	rs.size += int64(len(line)) + 1
	rs.n++
}

// writeTemp flushes, syncs and closes the temporary file.
func (rs *piRestore) writeTemp() error {
	werr := rs.werr
	if werr == nil {
		werr = rs.w.Flush()
	}
	if werr == nil {
		werr = rs.f.Sync()
	}
	if werr != nil {
		return fmt.Errorf("restore %s: %w", rs.path, werr)
	}
	if err := rs.f.Close(); err != nil {
		rs.f = nil
		_ = rs.fsys.Remove(rs.tmp)
		return fmt.Errorf("restore %s: %w", rs.path, err)
	}
	rs.f = nil
	return nil
}

// place gives the temporary file the session file's name, unless the
// session file exists, and returns what restore returns.
func (rs *piRestore) place() (string, int, int64, []RefusedLine, error) {
	fsys, tmp, path := rs.fsys, rs.tmp, rs.path
	// Under the lock nothing of sessctl's creates the file; a link fails
	// should anything else have.
	err := fsys.Link(tmp, path)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, errors.ErrUnsupported) {
		if _, lerr := fsys.Lstat(path); lerr == nil {
			err = fs.ErrExist
		} else {
			err = fsys.Rename(tmp, path)
		}
	}
	_ = fsys.Remove(tmp)
	if errors.Is(err, fs.ErrExist) {
		return path, 0, 0, nil, errRestoreExists
	}
	if err != nil {
		return "", 0, 0, nil, fmt.Errorf("restore %s: %w", path, err)
	}
	if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
		return "", 0, 0, nil, fmt.Errorf("restore %s: %w", path, err)
	}
	return path, rs.n, rs.size, rs.refused, nil
}
