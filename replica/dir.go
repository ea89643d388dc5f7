package replica

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// dirLockName is the lock file of a directory remote, in its root.
const dirLockName = ".sessctl-lock"

// dirTempPrefix starts the names of a directory remote's files being
// written.
const dirTempPrefix = ".tmp-"

// dirClient is the Client of a directory: the object k is the file
// root/k ("/" the path separator).
type dirClient struct {
	root  string
	fs    vfs.FS
	sem   chan struct{} // this process's turn at the lock file
	flock bool          // lock the lock file too (fs is the real filesystem)
}

// NewDirClient returns the Client of a directory (on a local disk, or a
// shared one whose locks work across machines, such as NFSv4): the object
// with key "a/b" is the file dir/a/b. The directory must exist (as a
// bucket must); directories below it are made as needed (0700), files
// 0600. fsys is the filesystem seam (nil: the real one). It does not
// touch the disk.
//
// Keys are "/"-separated file names, none starting with "." (the client's
// own files: the lock file and files being written, which listings leave
// out). Two limits S3 does not have: "a" and "a/b" cannot both be
// objects (a name is a file or a directory), and on a case-insensitive
// filesystem keys that differ only in case are one object. The layout
// of docs/spec/replication.md makes neither.
//
// Every write goes to a new file beside the object, synced, which then
// takes the object's name: readers see the old file or the whole new
// one, and a crash leaves at most a temporary file (".tmp-*"). Put
// renames it over the object. PutIfAbsent hard-links it to the object's
// name, which fails when that name exists (where the filesystem has no
// hard links it renames under the lock below, after checking). PutIfMatch
// and Delete, and Put, hold an exclusive flock(2) on the root's
// ".sessctl-lock" while they check and rename or remove, so that a
// compare-and-swap and any other change of the object happen one after
// the other. ETags are the SHA-256 of the bytes (Get reads the file once
// to compute it); listings leave them empty. Delete removes directories
// it leaves empty. (With an fsys other than the real filesystem, a test's,
// the lock is this process's alone.)
func NewDirClient(dir string, fsys vfs.FS) (Client, error) {
	if dir == "" {
		return nil, fmt.Errorf("open directory remote: no directory: %w", ErrBadRemote)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open directory remote %s: %w", dir, err)
	}
	if fsys == nil {
		fsys = vfs.OS()
	}
	return &dirClient{root: abs, fs: fsys, sem: make(chan struct{}, 1), flock: fsys == vfs.OS()}, nil
}

// errBadKey is a key a directory cannot hold.
var errBadKey = errors.New(`not a key a directory remote can hold: each "/"-separated element must be a file name that does not start with "."`)

// path returns the file of key.
func (d *dirClient) path(key string) (string, error) {
	for _, e := range strings.Split(key, "/") {
		if !validDirElem(e) {
			return "", fmt.Errorf("%q: %w", key, errBadKey)
		}
	}
	return filepath.Join(d.root, filepath.FromSlash(key)), nil
}

func validDirElem(e string) bool {
	return layout.CheckName(e) == nil && !strings.HasPrefix(e, ".")
}

// absent says what a missing file means: the root is missing
// (ErrNoBucket) or the object is (ErrObjectNotFound).
func (d *dirClient) absent(op, path string) error {
	if _, err := d.fs.Stat(d.root); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s %s: %w", op, path, ErrNoBucket)
	}
	return fmt.Errorf("%s %s: %w", op, path, ErrObjectNotFound)
}

// isAbsent reports whether err says a file or one of its directories is
// missing (or a directory is a file).
func isAbsent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// open opens the object's file for reading; a directory at its path is no
// object.
func (d *dirClient) open(op, path string) (vfs.File, fs.FileInfo, error) {
	f, err := d.fs.OpenFile(path, os.O_RDONLY|vfs.NoFollow, 0)
	if err != nil {
		if isAbsent(err) {
			return nil, nil, d.absent(op, path)
		}
		if fi, lerr := d.fs.Lstat(path); lerr == nil && fi.IsDir() {
			return nil, nil, fmt.Errorf("%s %s: %w", op, path, ErrObjectNotFound)
		}
		return nil, nil, fmt.Errorf("%s %s: %w", op, path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s %s: %w", op, path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s %s: %w", op, path, vfs.ErrNotRegular)
	}
	return f, fi, nil
}

// etagOf hashes the size bytes of f.
func etagOf(f io.ReaderAt, size int64) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, size)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (d *dirClient) Get(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, ObjectInfo{}, err
	}
	path, err := d.path(key)
	if err != nil {
		return nil, ObjectInfo{}, fmt.Errorf("read %s: %w", d.root, err)
	}
	f, fi, err := d.open("read", path)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	// The file is never changed in place (only replaced or removed), so
	// what this descriptor reads is one version throughout.
	etag, err := etagOf(f, fi.Size())
	if err != nil {
		f.Close()
		return nil, ObjectInfo{}, fmt.Errorf("read %s: %w", path, err)
	}
	return &dirReader{SectionReader: io.NewSectionReader(f, 0, fi.Size()), f: f}, ObjectInfo{Key: key, Size: fi.Size(), ETag: etag, ModTime: fi.ModTime()}, nil
}

// dirReader reads an object's file and closes it.
type dirReader struct {
	*io.SectionReader
	f vfs.File
}

func (r *dirReader) Close() error { return r.f.Close() }

func (d *dirClient) List(ctx context.Context, prefix string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		if _, err := d.fs.Stat(d.root); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				err = fmt.Errorf("list %s: %w", d.root, ErrNoBucket)
			} else {
				err = fmt.Errorf("list %s: %w", d.root, err)
			}
			yield(ObjectInfo{}, err)
			return
		}
		dirKey, first := "", prefix
		if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
			dirKey, first = prefix[:i], prefix[i+1:]
		}
		start := d.root
		if dirKey != "" {
			p, err := d.path(dirKey)
			if err != nil {
				return // no key can start so
			}
			start = p
		}
		d.walk(ctx, start, dirKey, first, yield)
	}
}

// walk yields the objects below dir (whose key is key) in key order, of
// the entries whose names start with first; false when the listing is
// over (the caller stopped, or an error was yielded).
func (d *dirClient) walk(ctx context.Context, dir, key, first string, yield func(ObjectInfo, error) bool) bool {
	ents, err := d.fs.ReadDir(dir)
	if err != nil {
		if isAbsent(err) {
			return true
		}
		yield(ObjectInfo{}, fmt.Errorf("list %s: %w", dir, err))
		return false
	}
	type ent struct {
		sortKey string
		e       fs.DirEntry
	}
	var list []ent
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, first) || !validDirElem(name) {
			continue
		}
		// Keys sort as byte strings: a directory's objects sort as its
		// name followed by "/".
		sk := name
		if e.IsDir() {
			sk += "/"
		}
		list = append(list, ent{sk, e})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].sortKey < list[j].sortKey })
	for _, x := range list {
		if err := ctx.Err(); err != nil {
			yield(ObjectInfo{}, err)
			return false
		}
		k := x.e.Name()
		if key != "" {
			k = key + "/" + k
		}
		p := filepath.Join(dir, x.e.Name())
		switch {
		case x.e.IsDir():
			if !d.walk(ctx, p, k, "", yield) {
				return false
			}
		case x.e.Type().IsRegular():
			fi, err := x.e.Info()
			if err != nil {
				continue // removed since the directory was read
			}
			if !yield(ObjectInfo{Key: k, Size: fi.Size(), ModTime: fi.ModTime()}, nil) {
				return false
			}
		}
		// Symbolic links and special files are no objects.
	}
	return true
}

// lock takes the remote's lock: this process's turn, then the lock
// file's flock. The returned function releases both.
func (d *dirClient) lock(ctx context.Context) (func(), error) {
	select {
	case d.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if !d.flock {
		return func() { <-d.sem }, nil
	}
	path := filepath.Join(d.root, dirLockName)
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR|vfs.NoFollow), flock.SetPermissions(vfs.FileMode))
	ok, err := fl.TryLock()
	if err == nil && !ok {
		ok, err = fl.TryLockContext(ctx, time.Millisecond)
	}
	if err != nil || !ok {
		<-d.sem
		if err == nil {
			err = ctx.Err()
		}
		if isAbsent(err) {
			return nil, fmt.Errorf("lock %s: %w", d.root, ErrNoBucket)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = fl.Unlock()
		<-d.sem
	}, nil
}

// staged is a new version of an object, written and synced beside it.
type staged struct {
	tmp, path string
	info      ObjectInfo
}

// stage writes the size bytes of r to a new temporary file beside the
// object's path.
func (d *dirClient) stage(ctx context.Context, key string, r io.Reader, size int64) (*staged, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := d.path(key)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", d.root, err)
	}
	if size < 0 {
		return nil, fmt.Errorf("write %s: negative size %d", path, size)
	}
	root, err := d.fs.Stat(d.root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("write %s: %w", path, ErrNoBucket)
		}
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	var f vfs.File
	var tmp string
	for try := 0; ; try++ {
		if err := vfs.MkdirAllSync(d.fs, dir, vfs.DirMode); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		var rnd [8]byte
		_, _ = rand.Read(rnd[:])
		tmp = filepath.Join(dir, dirTempPrefix+hex.EncodeToString(rnd[:]))
		f, err = d.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
		if err == nil {
			break
		}
		if !isAbsent(err) || try == 3 {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		// A Delete removed the directory, empty, since it was made.
	}
	fail := func(err error) (*staged, error) {
		f.Close()
		_ = d.fs.Remove(tmp)
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), r, size); err != nil {
		if errors.Is(err, io.EOF) {
			err = ErrShortBody
		}
		return fail(err)
	}
	if err := vfs.OwnLike(f, root); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = d.fs.Remove(tmp)
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &staged{tmp: tmp, path: path, info: ObjectInfo{Key: key, Size: size, ETag: hex.EncodeToString(h.Sum(nil)), ModTime: fi.ModTime()}}, nil
}

// discard removes the temporary file of a write that did not happen.
func (d *dirClient) discard(s *staged) { _ = d.fs.Remove(s.tmp) }

// commit makes durable the directory entry a write changed.
func (d *dirClient) commit(s *staged) error {
	if err := d.fs.SyncDir(filepath.Dir(s.path)); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", s.path, err)
	}
	return nil
}

// isDir reports whether a directory has the object's name.
func (d *dirClient) isDir(path string) bool {
	fi, err := d.fs.Lstat(path)
	return err == nil && fi.IsDir()
}

func (d *dirClient) Put(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error) {
	s, err := d.stage(ctx, key, r, size)
	if err != nil {
		return ObjectInfo{}, err
	}
	unlock, err := d.lock(ctx)
	if err != nil {
		d.discard(s)
		return ObjectInfo{}, fmt.Errorf("write %s: %w", s.path, err)
	}
	err = d.fs.Rename(s.tmp, s.path)
	unlock()
	if err != nil {
		d.discard(s)
		return ObjectInfo{}, fmt.Errorf("write %s: %w", s.path, err)
	}
	if err := d.commit(s); err != nil {
		return ObjectInfo{}, err
	}
	return s.info, nil
}

func (d *dirClient) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error) {
	s, err := d.stage(ctx, key, r, size)
	if err != nil {
		return ObjectInfo{}, err
	}
	err = d.fs.Link(s.tmp, s.path)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, errors.ErrUnsupported) {
		// No hard links here: check and rename under the lock.
		err = d.createLocked(ctx, s)
	} else {
		// The new name is linked; the temporary one goes either way.
		_ = d.fs.Remove(s.tmp)
		if err == nil {
			if err := d.commit(s); err != nil {
				return ObjectInfo{}, err
			}
		}
	}
	switch {
	case errors.Is(err, fs.ErrExist) && d.isDir(s.path):
		return ObjectInfo{}, fmt.Errorf("write %s: a directory has this name", s.path)
	case errors.Is(err, fs.ErrExist):
		return ObjectInfo{}, fmt.Errorf("write %s: %w", s.path, ErrObjectExists)
	case err != nil:
		return ObjectInfo{}, fmt.Errorf("write %s: %w", s.path, err)
	}
	return s.info, nil
}

// createLocked gives the staged file the object's name if nothing has
// it, under the lock; fs.ErrExist if something has.
func (d *dirClient) createLocked(ctx context.Context, s *staged) error {
	unlock, err := d.lock(ctx)
	if err != nil {
		d.discard(s)
		return err
	}
	_, err = d.fs.Lstat(s.path)
	switch {
	case err == nil:
		err = fs.ErrExist
	case errors.Is(err, fs.ErrNotExist):
		err = d.fs.Rename(s.tmp, s.path)
	}
	unlock()
	if err != nil {
		d.discard(s)
		return err
	}
	if err := d.fs.SyncDir(filepath.Dir(s.path)); err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	return nil
}

func (d *dirClient) PutIfMatch(ctx context.Context, key string, r io.Reader, size int64, etag string) (ObjectInfo, error) {
	if etag == "" {
		return ObjectInfo{}, fmt.Errorf("write %s: an empty ETag", key)
	}
	s, err := d.stage(ctx, key, r, size)
	if err != nil {
		return ObjectInfo{}, err
	}
	unlock, err := d.lock(ctx)
	if err != nil {
		d.discard(s)
		return ObjectInfo{}, fmt.Errorf("write %s: %w", s.path, err)
	}
	err = d.swap(s, etag)
	unlock()
	if err != nil {
		d.discard(s)
		return ObjectInfo{}, err
	}
	if err := d.commit(s); err != nil {
		return ObjectInfo{}, err
	}
	return s.info, nil
}

// swap renames the staged file over the object if its ETag is etag; the
// caller holds the lock.
func (d *dirClient) swap(s *staged, etag string) error {
	f, fi, err := d.open("write", s.path)
	if err != nil {
		return err
	}
	cur, err := etagOf(f, fi.Size())
	f.Close()
	switch {
	case err != nil:
		return fmt.Errorf("write %s: %w", s.path, err)
	case cur != etag:
		return fmt.Errorf("write %s: %w", s.path, ErrObjectChanged)
	}
	if err := d.fs.Rename(s.tmp, s.path); err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	return nil
}

func (d *dirClient) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	path, err := d.path(key)
	if err != nil {
		return fmt.Errorf("delete %s: %w", d.root, err)
	}
	unlock, err := d.lock(ctx)
	if err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	defer unlock()
	fi, err := d.fs.Lstat(path)
	switch {
	case isAbsent(err):
		if _, err := d.fs.Stat(d.root); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete %s: %w", path, ErrNoBucket)
		}
		return nil
	case err != nil:
		return fmt.Errorf("delete %s: %w", path, err)
	case fi.IsDir():
		return nil // no object has this key
	}
	if err := d.fs.Remove(path); err != nil && !isAbsent(err) {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	// Remove the directories left empty (S3 has none to leave behind);
	// one that holds anything, a file being written too, stays.
	dir := filepath.Dir(path)
	for dir != d.root && strings.HasPrefix(dir, d.root) {
		fi, err := d.fs.Lstat(dir)
		if err != nil || !fi.IsDir() || d.fs.Remove(dir) != nil {
			break
		}
		dir = filepath.Dir(dir)
	}
	if err := d.fs.SyncDir(dir); err != nil {
		return fmt.Errorf("delete %s: sync directory: %w", path, err)
	}
	return nil
}
