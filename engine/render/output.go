package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/sessionfile"
	"github.com/sessctl/sessctl/layout/vfs"
)

// An export written to a file (CreateOutput) goes into a temporary file
// beside its target and is renamed over it once complete, so a failed or
// interrupted export never leaves half a file. The target is checked
// first, and again just before the rename:
//
//   - its directory must exist: nothing is created;
//   - an existing file is replaced only when asked (replace);
//   - never, even then, a symbolic link, a directory, a device, a named
//     pipe or a socket, the session being exported (by identity, whatever
//     its name) or any file whose first line is a session header.

// ErrOutputExists is matched by the error for an existing target that
// was not to be replaced.
var ErrOutputExists = errors.New("already exists")

// CheckOutput returns why path cannot take the export of the session file
// source, or nil (see CreateOutput). It looks through fsys; nil means
// vfs.OS().
func CheckOutput(fsys vfs.FS, path, source string, replace bool) error {
	fsys = orOS(fsys)
	dir := filepath.Dir(path)
	st, err := fsys.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("write %s: directory %s does not exist (sessctl does not create it)", path, dir)
	case err != nil:
		return fmt.Errorf("write %s: %w", path, err)
	case !st.IsDir():
		return fmt.Errorf("write %s: %s is not a directory", path, dir)
	}
	fi, err := fsys.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return sessionfile.CheckOutput(fsys, path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	switch kind := fileKind(fi.Mode()); kind {
	case "":
	default:
		return fmt.Errorf("write %s: it is %s; sessctl never replaces one", path, kind)
	}
	if src, err := fsys.Stat(source); err == nil && vfs.SameFile(fi, src) {
		return fmt.Errorf("write %s: it is the session being exported; sessctl never replaces a session file", path)
	}
	if err := sessionfile.CheckOutput(fsys, path); err != nil {
		return err
	}
	isSession, err := startsWithHeader(fsys, path, fi)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if isSession {
		return fmt.Errorf("write %s: it is a session file (its first line is a session header); sessctl never replaces one", path)
	}
	if !replace {
		return fmt.Errorf("write %s: the file %w", path, ErrOutputExists)
	}
	return nil
}

// fileKind names a file type an export never replaces, or "" for a
// regular file.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// maxHeaderProbe bounds how much of a file startsWithHeader reads.
const maxHeaderProbe = 64 << 10

// startsWithHeader reports whether the regular file at path (fi, from
// Lstat) begins with a session header line. It opens the file without
// following links or blocking (the real filesystem's read-only open never
// waits on a special file), and checks it is still the file fi.
func startsWithHeader(fsys vfs.FS, path string, fi fs.FileInfo) (bool, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY|vfs.NoFollow, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !st.Mode().IsRegular() || !vfs.SameFile(st, fi) {
		return false, errors.New("the file changed while it was checked")
	}
	en, ok := firstEntry(f)
	return ok && en.IsHeader(), nil
}

// ReadHeaderLine returns the first entry of the file at path when it is a
// session header, read from the first 64 KB only (after a byte order
// mark and blank lines), without blocking on a special file. It reads
// through fsys; nil means vfs.OS().
func ReadHeaderLine(fsys vfs.FS, path string) (engine.Entry, bool) {
	f, err := orOS(fsys).OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return jsonl.Entry{}, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return jsonl.Entry{}, false
	}
	en, ok := firstEntry(f)
	if !ok || !en.IsHeader() {
		return jsonl.Entry{}, false
	}
	return en, true
}

// firstEntry parses the first non-blank line of r, looking at no more
// than maxHeaderProbe bytes (after a byte order mark, as the reader
// allows).
func firstEntry(r io.Reader) (jsonl.Entry, bool) {
	buf := make([]byte, maxHeaderProbe)
	n, err := io.ReadFull(r, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return jsonl.Entry{}, false
	}
	buf = bytes.TrimPrefix(buf[:n], []byte("\ufeff"))
	for len(buf) > 0 {
		line := buf
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			line, buf = buf[:i], buf[i+1:]
		} else {
			buf = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		en, err := jsonl.ParseEntry(line)
		return en, err == nil
	}
	return jsonl.Entry{}, false
}

// OutputFile is the temporary file an export streams into, renamed over
// its target by Commit.
type OutputFile struct {
	fs      vfs.FS
	f       vfs.File
	tmp     string
	path    string
	source  string
	replace bool
}

// CreateOutput checks that path may take the export of the session file
// source (see CheckOutput; replace lets it replace an existing regular
// file that is not a session) and creates the temporary file beside it,
// mode 0600, through fsys (nil means vfs.OS()). The caller writes the
// export to it and then calls Commit, or Abort.
func CreateOutput(fsys vfs.FS, path, source string, replace bool) (*OutputFile, error) {
	fsys = orOS(fsys)
	if err := CheckOutput(fsys, path, source, replace); err != nil {
		return nil, err
	}
	tmp := vfs.TempName(path)
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &OutputFile{fs: fsys, f: f, tmp: tmp, path: path, source: source, replace: replace}, nil
}

// Write writes to the temporary file.
func (o *OutputFile) Write(p []byte) (int, error) { return o.f.Write(p) }

// Commit makes the written file durable and renames it over the target,
// after checking the target once more.
func (o *OutputFile) Commit() error {
	if err := CheckOutput(o.fs, o.path, o.source, o.replace); err != nil {
		o.Abort()
		return err
	}
	err := o.f.Sync()
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = o.fs.Rename(o.tmp, o.path)
	}
	if err != nil {
		_ = o.fs.Remove(o.tmp)
		return fmt.Errorf("write %s: %w", o.path, err)
	}
	if err := o.fs.SyncDir(filepath.Dir(o.path)); err != nil {
		return fmt.Errorf("write %s: %w", o.path, err)
	}
	return nil
}

// Abort removes the temporary file: nothing is written.
func (o *OutputFile) Abort() {
	_ = o.f.Close()
	_ = o.fs.Remove(o.tmp)
}

// orOS is fsys, or the real filesystem when it is nil.
func orOS(fsys vfs.FS) vfs.FS {
	if fsys == nil {
		return vfs.OS()
	}
	return fsys
}

// errWriter remembers the first error of the writes through it, for the
// writers that write with fmt: they return it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
