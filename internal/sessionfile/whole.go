package sessionfile

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/layout/vfs"
)

// WriteResult says what WriteWhole did.
type WriteResult int

// The outcomes of WriteWhole.
const (
	WriteUnchanged WriteResult = iota // the file already held exactly these bytes
	WriteCreated                      // the file did not exist
	WriteReplaced                     // the file existed with other bytes
)

// String returns "unchanged", "created" or "replaced".
func (r WriteResult) String() string {
	switch r {
	case WriteCreated:
		return "created"
	case WriteReplaced:
		return "replaced"
	}
	return "unchanged"
}

// WriteOptions configure WriteWhole.
type WriteOptions struct {
	// Lock is how the session's writer lock is taken (its FS is the
	// filesystem written to).
	Lock LockOptions
	// NoLock skips the writer lock, for a caller that holds it.
	NoLock bool
}

// WriteWhole makes data the complete content of the session file at path,
// as importers and replication need: it takes the session's writer lock
// (unless o.NoLock), and then leaves the file alone when it already holds
// exactly data, creates it when it is missing, or replaces it atomically
// (temporary file, sync, rename, directory sync) when check, called with
// the current bytes, allows it. A check error is returned as it is and
// nothing is written. Missing directories are created 0700, the file
// 0600; a symbolic link at path is refused.
func WriteWhole(ctx context.Context, path string, data []byte, check func(current []byte) error, o WriteOptions) (res WriteResult, err error) {
	fsys, abs, release, err := beginWhole(ctx, path, o)
	if err != nil {
		return res, err
	}
	defer func() {
		if rerr := release(); err == nil {
			err = rerr
		}
	}()
	current, err := fsys.ReadFile(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res = WriteCreated
	case err != nil:
		return res, fmt.Errorf("read session %s: %w", abs, err)
	case bytes.Equal(current, data):
		return WriteUnchanged, nil
	default:
		if check != nil {
			if err := check(current); err != nil {
				return res, err
			}
		}
		res = WriteReplaced
	}
	if err := vfs.WriteFileAtomic(fsys, abs, data, vfs.FileMode); err != nil {
		return res, err
	}
	return res, nil
}

// beginWhole is what WriteWhole and WriteWholeFrom do before they look
// at the file: its absolute path, its directory made, the writer lock
// taken (release gives it up), a symbolic link refused.
func beginWhole(ctx context.Context, path string, o WriteOptions) (fsys vfs.FS, abs string, release func() error, err error) {
	fsys = o.Lock.FS
	if fsys == nil {
		fsys = vfs.OS()
	}
	release = func() error { return nil }
	if abs, err = filepath.Abs(path); err != nil {
		return nil, "", release, fmt.Errorf("write session %s: %w", path, err)
	}
	if err := vfs.MkdirAllSync(fsys, filepath.Dir(abs), vfs.DirMode); err != nil {
		return nil, "", release, fmt.Errorf("write session %s: %w", abs, err)
	}
	if !o.NoLock {
		lk, err := Acquire(ctx, abs, o.Lock)
		if err != nil {
			return nil, "", release, fmt.Errorf("open session %s for writing: %w", abs, err)
		}
		release = func() error {
			if err := lk.Close(); err != nil {
				return fmt.Errorf("release lock of %s: %w", abs, err)
			}
			return nil
		}
	}
	if fi, err := fsys.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, "", release, errors.Join(fmt.Errorf("write session %s: %w", abs, vfs.ErrSymlink), release())
	}
	return fsys, abs, release, nil
}

// WriteWholeFrom is WriteWhole for content too large to hold in memory:
// write writes it (it is called up to twice, and must write the same bytes
// each time: once to compare them with the current file, once into the
// temporary file that replaces it), and check reads the current file
// from r. Neither the content nor the current file is ever held in
// memory.
func WriteWholeFrom(ctx context.Context, path string, write func(w io.Writer) error, check func(current io.Reader) error, o WriteOptions) (res WriteResult, err error) {
	fsys, abs, release, err := beginWhole(ctx, path, o)
	if err != nil {
		return res, err
	}
	defer func() {
		if rerr := release(); err == nil {
			err = rerr
		}
	}()
	res, err = compareFile(fsys, abs, write, check)
	if err != nil || res == WriteUnchanged {
		return res, err
	}
	if err := vfs.WriteFileAtomicFrom(fsys, abs, write, vfs.FileMode); err != nil {
		return res, err
	}
	return res, nil
}

// CompareFile tells what WriteWholeFrom would do with the file at path
// without writing anything: WriteCreated when it is missing,
// WriteUnchanged when it holds what write writes, otherwise check's error
// or WriteReplaced.
func CompareFile(fsys vfs.FS, path string, write func(w io.Writer) error, check func(current io.Reader) error) (WriteResult, error) {
	if fsys == nil {
		fsys = vfs.OS()
	}
	return compareFile(fsys, path, write, check)
}

func compareFile(fsys vfs.FS, path string, write func(w io.Writer) error, check func(current io.Reader) error) (WriteResult, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return WriteCreated, nil
	case err != nil:
		return WriteCreated, fmt.Errorf("read session %s: %w", path, err)
	}
	defer f.Close()
	cw := &compareWriter{r: bufio.NewReaderSize(io.NewSectionReader(f, 0, 1<<62), 256<<10), same: true}
	if err := write(cw); err != nil && !errors.Is(err, errDiffers) {
		return WriteCreated, err
	}
	if cw.err != nil {
		return WriteCreated, fmt.Errorf("read session %s: %w", path, cw.err)
	}
	if cw.same {
		if _, err := cw.r.ReadByte(); err == io.EOF {
			return WriteUnchanged, nil
		} else if err != nil {
			return WriteCreated, fmt.Errorf("read session %s: %w", path, err)
		}
	}
	if check != nil {
		if err := check(io.NewSectionReader(f, 0, 1<<62)); err != nil {
			return WriteReplaced, err
		}
	}
	return WriteReplaced, nil
}

var errDiffers = errors.New("differs")

// compareWriter compares what is written to it with r, and stops the
// writer at the first difference.
type compareWriter struct {
	r    *bufio.Reader
	same bool
	err  error
	buf  []byte
}

func (w *compareWriter) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		n := min(len(p), 64<<10)
		if cap(w.buf) < n {
			w.buf = make([]byte, 64<<10)
		}
		b := w.buf[:n]
		m, err := io.ReadFull(w.r, b)
		if m < n || !bytes.Equal(b[:m], p[:m]) {
			w.same = false
			if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
				w.err = err
			}
			return 0, errDiffers
		}
		p = p[n:]
	}
	return total, nil
}
