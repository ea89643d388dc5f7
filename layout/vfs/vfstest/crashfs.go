package vfstest

import (
	"io"
	"io/fs"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sessctl/sessctl/layout/vfs"
)

// CrashFS is an in-memory vfs.FS that remembers what a power cut would keep,
// for crash tests (the idea of pebble's vfs.NewCrashableMem and CrashClone).
//
// It keeps two views of everything. The running view is what the
// operating system shows processes: every write, create, rename and remove
// takes effect at once, and every FS method answers from it. The durable
// view is what is on the disk:
//
//   - a file's contents become durable only through File.Sync (of any
//     handle of the file);
//   - a directory's entries (creates, renames, removes, links, MkdirAll of
//     a subdirectory) become durable only through SyncDir of that
//     directory. Syncing a file does not make its name durable, and syncing
//     a directory does not make its subdirectories' entries durable.
//
// CrashClone returns the state a machine would find after a power cut at
// this instant. Without a random source only durable data survives. With
// one, each file independently keeps its durable contents, all its
// current contents, or, when it was only appended to since its last sync,
// its durable contents plus a random prefix of the appended bytes (a torn
// write); each directory independently keeps its durable entries plus a
// random prefix of the entry changes made since its last SyncDir, in the
// order they were made. A rename within one directory is one change, so
// after a crash the file is at the old name or the new one, never both or
// neither. (A rename between two directories is a removal in one and an
// addition in the other, which a crash may split; sessctl never does one.)
//
// Paths are slash-separated; relative names are taken from the root, which
// always exists. Symbolic links do not exist, so vfs.NoFollow changes nothing.
// Errors are the os package's: *fs.PathError (*os.LinkError for Rename and
// Link) wrapping the syscall.Errno the kernel would return, so errors.Is
// with fs.ErrNotExist, fs.ErrExist and friends works. A CrashFS is safe for
// concurrent use.
type CrashFS struct {
	mu     sync.Mutex
	root   *crashNode
	nextID uint64
}

var _ vfs.FS = (*CrashFS)(nil)

// NewCrashFS returns an empty CrashFS holding only the root directory,
// which is durable.
func NewCrashFS() *CrashFS {
	c := &CrashFS{}
	c.root = c.newNode(fs.ModeDir | vfs.DirMode)
	return c
}

// crashNode is a file or directory (an inode: hard links share it).
type crashNode struct {
	id    uint64
	mode  fs.FileMode
	mtime time.Time

	// Files: data is the running contents, synced the durable ones.
	// dirtyFrom is the lowest offset changed since the last sync
	// (math.MaxInt64 when nothing changed), which tells a pure append.
	data      []byte
	synced    []byte
	dirtyFrom int64

	// Directories: children is the running view; durable plus pending
	// replayed in order gives children.
	children map[string]*crashNode
	durable  map[string]*crashNode
	pending  []dirOp
}

// dirOp is one change to a directory's entries: remove del, then make set
// refer to node. A rename within the directory sets both.
type dirOp struct {
	del  string
	set  string
	node *crashNode
}

func (op dirOp) apply(m map[string]*crashNode) {
	if op.del != "" {
		delete(m, op.del)
	}
	if op.set != "" {
		m[op.set] = op.node
	}
}

func (n *crashNode) isDir() bool { return n.mode.IsDir() }

func (c *CrashFS) newNode(mode fs.FileMode) *crashNode {
	c.nextID++
	n := &crashNode{id: c.nextID, mode: mode, mtime: time.Now(), dirtyFrom: math.MaxInt64}
	if n.isDir() {
		n.children = make(map[string]*crashNode)
		n.durable = make(map[string]*crashNode)
	}
	return n
}

// change records a directory entry change in the running view and in the
// pending log.
func (d *crashNode) change(op dirOp) {
	op.apply(d.children)
	d.pending = append(d.pending, op)
	d.mtime = time.Now()
}

// markDirty notes that file contents from off on changed.
func (n *crashNode) markDirty(off int64) {
	n.dirtyFrom = min(n.dirtyFrom, off)
	n.mtime = time.Now()
}

func (n *crashNode) sync() {
	if n.dirtyFrom == math.MaxInt64 {
		return
	}
	if n.dirtyFrom >= int64(len(n.synced)) && len(n.data) >= len(n.synced) {
		n.synced = append(n.synced, n.data[len(n.synced):]...)
	} else {
		n.synced = slices.Clone(n.data)
	}
	n.dirtyFrom = math.MaxInt64
}

// clean turns a path into its elements below the root. It cleans with
// package path, not filepath: on Windows filepath.Clean would take the
// "//" of "/" + "/data" for the start of a UNC path. A volume name is
// dropped, so that on Windows "/base" and the "C:\base" that
// filepath.Abs makes of it are the same directory: a CrashFS has one
// root.
func clean(name string) []string {
	name = name[len(filepath.VolumeName(name)):]
	p := path.Clean("/" + filepath.ToSlash(name))
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

// lookup returns the node at the path elements.
func (c *CrashFS) lookup(elems []string) (*crashNode, error) {
	n := c.root
	for _, e := range elems {
		if !n.isDir() {
			return nil, syscall.ENOTDIR
		}
		child, ok := n.children[e]
		if !ok {
			return nil, syscall.ENOENT
		}
		n = child
	}
	return n, nil
}

// parentOf returns the directory that holds the last element and that
// element's name. The root has no parent: EBUSY, as the kernel says when
// asked to remove or rename it.
func (c *CrashFS) parentOf(elems []string) (*crashNode, string, error) {
	if len(elems) == 0 {
		return nil, "", syscall.EBUSY
	}
	d, err := c.lookup(elems[:len(elems)-1])
	if err != nil {
		return nil, "", err
	}
	if !d.isDir() {
		return nil, "", syscall.ENOTDIR
	}
	return d, elems[len(elems)-1], nil
}

// OpenFile opens or creates a file. It honours O_RDONLY, O_WRONLY,
// O_RDWR, O_CREATE, O_EXCL, O_TRUNC, O_APPEND and O_SYNC (every write is
// synced); other flags, vfs.NoFollow among them, are ignored. Opening a
// directory fails with EISDIR, as the real FS's OpenFile refuses
// everything but regular files.
func (c *CrashFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	elems := clean(name)
	acc := flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	write := acc == os.O_WRONLY || acc == os.O_RDWR
	n, err := c.lookup(elems)
	switch {
	case err == syscall.ENOENT && flag&os.O_CREATE != 0:
		d, base, perr := c.parentOf(elems)
		if perr != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: perr}
		}
		n = c.newNode(perm & fs.ModePerm)
		d.change(dirOp{set: base, node: n})
	case err != nil:
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EEXIST}
	case n.isDir():
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	}
	if flag&os.O_TRUNC != 0 && write && len(n.data) > 0 {
		n.data = n.data[:0]
		n.markDirty(0)
	}
	return &crashFile{fs: c, node: n, name: name, flag: flag}, nil
}

// ReadFile returns the running contents of a file.
func (c *CrashFS) ReadFile(name string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.lookup(clean(name))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if n.isDir() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	}
	return slices.Clone(n.data), nil
}

// Rename renames oldname to newname, replacing a file at newname, like
// os.Rename. It is durable once the directories involved are synced.
func (c *CrashFS) Rename(oldname, newname string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	lerr := func(err error) error { return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err} }
	oe, ne := clean(oldname), clean(newname)
	// os.Rename refuses to replace a directory before calling rename(2).
	if old, err := c.lookup(ne); err == nil && old.isDir() {
		n, err := c.lookup(oe)
		if err != nil {
			return lerr(err)
		}
		if newname == oldname || n != old {
			return lerr(syscall.EEXIST)
		}
	}
	// rename(2) resolves both parents, then looks for the source.
	od, obase, err := c.parentOf(oe)
	if err != nil {
		return lerr(err)
	}
	nd, nbase, err := c.parentOf(ne)
	if err != nil {
		return lerr(err)
	}
	n, ok := od.children[obase]
	if !ok {
		return lerr(syscall.ENOENT)
	}
	if n.isDir() && len(ne) > len(oe) && slices.Equal(ne[:len(oe)], oe) {
		return lerr(syscall.EINVAL) // into its own subtree
	}
	if old, ok := nd.children[nbase]; ok {
		switch {
		case old == n:
			return nil // the same file: rename(2) does nothing
		case n.isDir():
			return lerr(syscall.ENOTDIR)
		}
	}
	if od == nd {
		od.change(dirOp{del: obase, set: nbase, node: n})
		return nil
	}
	od.change(dirOp{del: obase})
	nd.change(dirOp{set: nbase, node: n})
	return nil
}

// Link makes newname another name of the file oldname, like os.Link.
func (c *CrashFS) Link(oldname, newname string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	lerr := func(err error) error { return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: err} }
	// link(2) resolves the source, then the target's parent, then checks.
	n, err := c.lookup(clean(oldname))
	if err != nil {
		return lerr(err)
	}
	d, base, err := c.parentOf(clean(newname))
	if err != nil {
		return lerr(err)
	}
	if _, ok := d.children[base]; ok {
		return lerr(syscall.EEXIST)
	}
	if n.isDir() {
		return lerr(syscall.EPERM)
	}
	d.change(dirOp{set: base, node: n})
	return nil
}

// Remove removes a file or an empty directory.
func (c *CrashFS) Remove(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, base, err := c.parentOf(clean(name))
	if err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	n, ok := d.children[base]
	if !ok {
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.ENOENT}
	}
	if n.isDir() && len(n.children) > 0 {
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.ENOTEMPTY}
	}
	d.change(dirOp{del: base})
	return nil
}

// RemoveAll removes name and everything below it, like os.RemoveAll: a
// missing name is no error. The removal of name from its directory is
// durable only after SyncDir of that directory; what was below it is gone
// with it.
func (c *CrashFS) RemoveAll(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	elems := clean(name)
	d, base, err := c.parentOf(elems)
	if err == syscall.ENOENT {
		return nil
	}
	if err != nil {
		return &fs.PathError{Op: "unlinkat", Path: name, Err: err}
	}
	if _, ok := d.children[base]; !ok {
		return nil
	}
	d.change(dirOp{del: base})
	return nil
}

// Mkdir creates one directory with perm, like os.Mkdir: EEXIST when name
// exists, ENOENT when its parent does not. Its entry in the parent is
// durable only after SyncDir of the parent.
func (c *CrashFS) Mkdir(name string, perm fs.FileMode) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, base, err := c.parentOf(clean(name))
	if err != nil {
		if err == syscall.EBUSY {
			err = syscall.EEXIST // the root exists
		}
		return &fs.PathError{Op: "mkdir", Path: name, Err: err}
	}
	if _, ok := d.children[base]; ok {
		return &fs.PathError{Op: "mkdir", Path: name, Err: syscall.EEXIST}
	}
	d.change(dirOp{set: base, node: c.newNode(fs.ModeDir | perm&fs.ModePerm)})
	return nil
}

// MkdirAll creates a directory and any missing parents with perm. Each new
// directory's entry in its parent is durable only after SyncDir of the
// parent.
func (c *CrashFS) MkdirAll(name string, perm fs.FileMode) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.root
	for _, e := range clean(name) {
		child, ok := n.children[e]
		if !ok {
			child = c.newNode(fs.ModeDir | perm&fs.ModePerm)
			n.change(dirOp{set: e, node: child})
		} else if !child.isDir() {
			return &fs.PathError{Op: "mkdir", Path: name, Err: syscall.ENOTDIR}
		}
		n = child
	}
	return nil
}

// Stat describes a file.
func (c *CrashFS) Stat(name string) (fs.FileInfo, error) { return c.stat("stat", name) }

// Lstat is Stat: a CrashFS has no symbolic links.
func (c *CrashFS) Lstat(name string) (fs.FileInfo, error) { return c.stat("lstat", name) }

func (c *CrashFS) stat(op, name string) (fs.FileInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	elems := clean(name)
	n, err := c.lookup(elems)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	base := "/"
	if len(elems) > 0 {
		base = elems[len(elems)-1]
	}
	return c.info(base, n), nil
}

func (c *CrashFS) info(name string, n *crashNode) *crashInfo {
	return &crashInfo{name: name, size: int64(len(n.data)), mode: n.mode, mtime: n.mtime, id: n.id, fs: c}
}

// ReadDir lists a directory's running entries sorted by name.
func (c *CrashFS) ReadDir(name string) ([]fs.DirEntry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.lookup(clean(name))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if !n.isDir() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOTDIR}
	}
	names := slices.Sorted(maps.Keys(n.children))
	out := make([]fs.DirEntry, len(names))
	for i, e := range names {
		out[i] = fs.FileInfoToDirEntry(c.info(e, n.children[e]))
	}
	return out, nil
}

// SyncDir makes the directory's entries durable. Unlike syncing an open
// file on the real filesystem, it fails with ENOTDIR for a file, so a test
// notices a sync of the wrong path.
func (c *CrashFS) SyncDir(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.lookup(clean(name))
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if !n.isDir() {
		return &fs.PathError{Op: "sync", Path: name, Err: syscall.ENOTDIR}
	}
	n.durable = maps.Clone(n.children)
	n.pending = nil
	return nil
}

// CrashClone returns a new CrashFS holding what a power cut now would
// leave on disk; c itself is not changed and its open files stay usable.
// With rng nil only durable data survives (the harshest crash); otherwise
// rng chooses, for each file and directory, how much of what is not yet
// durable survives, as described on CrashFS. The same rng state on the
// same CrashFS gives the same result. Everything in the clone is durable.
func (c *CrashFS) CrashClone(rng *rand.Rand) *CrashFS {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &CrashFS{nextID: c.nextID}
	memo := make(map[*crashNode]*crashNode)
	out.root = crashCopy(c.root, rng, memo)
	return out
}

func crashCopy(src *crashNode, rng *rand.Rand, memo map[*crashNode]*crashNode) *crashNode {
	if d, ok := memo[src]; ok {
		return d // another hard link to a file already copied
	}
	d := &crashNode{id: src.id, mode: src.mode, mtime: src.mtime, dirtyFrom: math.MaxInt64}
	memo[src] = d
	if src.isDir() {
		keep := 0
		if rng != nil {
			keep = rng.IntN(len(src.pending) + 1)
		}
		entries := maps.Clone(src.durable)
		for _, op := range src.pending[:keep] {
			op.apply(entries)
		}
		d.children = make(map[string]*crashNode, len(entries))
		// Sorted, so that the rng is consumed in the same order every time.
		for _, name := range slices.Sorted(maps.Keys(entries)) {
			d.children[name] = crashCopy(entries[name], rng, memo)
		}
		d.durable = maps.Clone(d.children)
		return d
	}
	d.data = slices.Clone(crashContents(src, rng))
	d.synced = slices.Clone(d.data)
	return d
}

// crashContents chooses what survives of a file.
func crashContents(n *crashNode, rng *rand.Rand) []byte {
	if n.dirtyFrom == math.MaxInt64 || rng == nil {
		return n.synced
	}
	appended := n.dirtyFrom >= int64(len(n.synced)) && len(n.data) >= len(n.synced)
	switch rng.IntN(3) {
	case 0:
		return n.synced
	case 1:
		if appended {
			// A torn write: the appended bytes reached the disk up to a
			// random point.
			return n.data[:len(n.synced)+rng.IntN(len(n.data)-len(n.synced)+1)]
		}
		return n.synced
	}
	return n.data
}

// Unsynced lists, sorted, the paths whose running state a crash could
// lose: files with contents not yet synced and directories with entry
// changes not yet synced. Only paths reachable in the running view are
// listed; a file that was written and then removed is not.
func (c *CrashFS) Unsynced() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	seen := make(map[*crashNode]bool)
	var walk func(p string, n *crashNode)
	walk = func(p string, n *crashNode) {
		if seen[n] {
			return
		}
		seen[n] = true
		if !n.isDir() {
			if n.dirtyFrom != math.MaxInt64 {
				out = append(out, p)
			}
			return
		}
		if len(n.pending) > 0 {
			out = append(out, p)
		}
		for _, name := range slices.Sorted(maps.Keys(n.children)) {
			walk(strings.TrimSuffix(p, "/")+"/"+name, n.children[name])
		}
	}
	walk("/", c.root)
	slices.Sort(out)
	return out
}

// crashInfo is the fs.FileInfo of a CrashFS file. SameFile compares the
// files themselves (see vfs.SameFile).
type crashInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
	id    uint64
	fs    *CrashFS
}

func (i *crashInfo) Name() string       { return i.name }
func (i *crashInfo) Size() int64        { return i.size }
func (i *crashInfo) Mode() fs.FileMode  { return i.mode }
func (i *crashInfo) ModTime() time.Time { return i.mtime }
func (i *crashInfo) IsDir() bool        { return i.mode.IsDir() }
func (i *crashInfo) Sys() any           { return nil }

// SameFile reports whether o describes the same file of the same CrashFS.
func (i *crashInfo) SameFile(o fs.FileInfo) bool {
	x, ok := o.(*crashInfo)
	return ok && x.fs == i.fs && x.id == i.id
}

// crashFile is an open file of a CrashFS.
type crashFile struct {
	fs     *CrashFS
	node   *crashNode
	name   string
	flag   int
	pos    int64
	closed bool
}

func (f *crashFile) readable() bool {
	acc := f.flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	return acc == os.O_RDONLY || acc == os.O_RDWR
}

func (f *crashFile) writable() bool {
	acc := f.flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	return acc == os.O_WRONLY || acc == os.O_RDWR
}

// check returns the error of an operation on a closed handle or, for
// reads and writes, on a handle opened without that access.
func (f *crashFile) check(op string, read, write bool) error {
	var err error
	switch {
	case f.closed:
		err = fs.ErrClosed
	case read && f.node.isDir():
		err = syscall.EISDIR
	case read && !f.readable(), write && !f.writable():
		err = syscall.EBADF
	}
	if err != nil {
		return &fs.PathError{Op: op, Path: f.name, Err: err}
	}
	return nil
}

func (f *crashFile) Name() string { return f.name }

func (f *crashFile) Read(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read", true, false); err != nil {
		return 0, err
	}
	if f.pos >= int64(len(f.node.data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, f.node.data[f.pos:])
	f.pos += int64(n)
	return n, nil
}

func (f *crashFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read", true, false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.name, Err: syscall.EINVAL}
	}
	if off >= int64(len(f.node.data)) {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Write writes at the handle's offset, or at the end with O_APPEND.
func (f *crashFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write", false, true); err != nil {
		return 0, err
	}
	n := f.node
	if f.flag&os.O_APPEND != 0 {
		f.pos = int64(len(n.data))
	}
	end := f.pos + int64(len(p))
	if old := len(n.data); end > int64(old) {
		n.data = slices.Grow(n.data, int(end)-old)[:end]
		clear(n.data[old:]) // a write past the end leaves a hole of zeros
	}
	copy(n.data[f.pos:], p)
	if len(p) > 0 {
		n.markDirty(f.pos)
	}
	f.pos = end
	if f.flag&os.O_SYNC != 0 {
		n.sync()
	}
	return len(p), nil
}

// Sync makes the file's contents durable (not its name).
func (f *crashFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("sync", false, false); err != nil {
		return err
	}
	f.node.sync()
	return nil
}

// Truncate changes the file's size; the handle must be writable.
func (f *crashFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("truncate", false, false); err != nil {
		return err
	}
	if size < 0 || !f.writable() || f.node.isDir() {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: syscall.EINVAL}
	}
	n := f.node
	old := int64(len(n.data))
	switch {
	case size < old:
		n.data = n.data[:size]
	case size > old:
		n.data = slices.Grow(n.data, int(size-old))[:size]
		clear(n.data[old:])
	default:
		return nil
	}
	n.markDirty(min(size, old))
	return nil
}

func (f *crashFile) Stat() (fs.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("stat", false, false); err != nil {
		return nil, err
	}
	return f.fs.info(filepath.Base(f.name), f.node), nil
}

func (f *crashFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("close", false, false); err != nil {
		return err
	}
	f.closed = true
	return nil
}
