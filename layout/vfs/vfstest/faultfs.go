package vfstest

import (
	"io/fs"
	"os"
	"strconv"
	"sync"
	"syscall"

	"github.com/sessctl/sessctl/layout/vfs"
)

// Op is a kind of filesystem operation, as FaultFS counts and fails them.
type Op uint8

// The operations of FS and File.
const (
	OpOpen     Op = iota + 1 // FS.OpenFile without O_CREATE
	OpCreate                 // FS.OpenFile with O_CREATE
	OpRead                   // File.Read, File.ReadAt, FS.ReadFile
	OpWrite                  // File.Write
	OpSync                   // File.Sync
	OpTruncate               // File.Truncate
	OpClose                  // File.Close
	OpStat                   // FS.Stat, FS.Lstat, File.Stat
	OpReadDir                // FS.ReadDir
	OpRename                 // FS.Rename
	OpLink                   // FS.Link
	OpRemove                 // FS.Remove, FS.RemoveAll
	OpMkdir                  // FS.Mkdir, FS.MkdirAll
	OpSyncDir                // FS.SyncDir
	OpChown                  // FaultFS.Lchown, File.Chown
	numOps
)

var opNames = [numOps]string{
	OpOpen: "open", OpCreate: "create", OpRead: "read", OpWrite: "write",
	OpSync: "sync", OpTruncate: "truncate", OpClose: "close", OpStat: "stat",
	OpReadDir: "readdir", OpRename: "rename", OpLink: "link", OpRemove: "remove",
	OpMkdir: "mkdir", OpSyncDir: "syncdir", OpChown: "chown",
}

// String returns the operation's name ("write", "syncdir", ...).
func (o Op) String() string {
	if o < numOps && opNames[o] != "" {
		return opNames[o]
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// Mutates reports whether the operation can change what is on disk.
func (o Op) Mutates() bool {
	switch o {
	case OpCreate, OpWrite, OpSync, OpTruncate, OpRename, OpLink, OpRemove, OpMkdir, OpSyncDir, OpChown:
		return true
	}
	return false
}

// pathOp is the Op field of the *fs.PathError an operation fails with,
// as the os package names it.
func (o Op) pathOp() string {
	switch o {
	case OpCreate:
		return "open"
	case OpSyncDir:
		return "sync"
	case OpChown:
		return "lchown"
	case OpReadDir:
		return "open"
	}
	return o.String()
}

// Fault is an error FaultFS injects.
type Fault struct {
	// Op is the kind of operation that fails.
	Op Op
	// N picks the call that fails: the Nth call of Op (among those Match
	// accepts) after Inject. 0 means 1, the next call.
	N int
	// Err is the error the call fails with, wrapped in *fs.PathError
	// (*os.LinkError for rename and link) as the os package does; nil
	// means syscall.EIO.
	Err error
	// Repeat makes every later call fail as well, like a disk that stays
	// full or broken. Otherwise the fault fires once.
	Repeat bool
	// Written, for OpWrite, is how many bytes of the failing write reach
	// the file before the error, as when a disk fills up in the middle of
	// a write; -1 means half of them (rounded down). The call returns that
	// count with the error.
	Written int
	// Short, for OpWrite, makes the failing call return the Written count
	// with no error: a short write, which io.Writer forbids but a File
	// of another FS may still do. Err is then not used.
	Short bool
	// Match, when not nil, limits the fault to calls on the paths it
	// accepts (for rename and link, either path).
	Match func(path string) bool
}

// DiskFull returns the fault of a disk that fills up at the nth write
// from now: that write stores half its bytes and fails with ENOSPC, and
// so does every write after it.
func DiskFull(n int) Fault {
	return Fault{Op: OpWrite, N: n, Err: syscall.ENOSPC, Repeat: true, Written: -1}
}

type armed struct {
	Fault
	seen int
}

// FaultFS wraps an FS and makes chosen operations fail: the Nth write,
// sync, rename, create, link or directory sync, or any other kind of
// operation, with EIO, ENOSPC (after writing part of the bytes) or any
// error. It counts every call by kind. A hook can watch, or fail, every
// call. A FaultFS is safe for concurrent use.
type FaultFS struct {
	fsys vfs.FS

	mu       sync.Mutex
	calls    [numOps]int
	faults   []*armed
	injected int
	hook     func(op Op, path string) error
}

var _ vfs.FS = (*FaultFS)(nil)

// NewFaultFS returns a FaultFS over fsys that injects nothing until told.
func NewFaultFS(fsys vfs.FS) *FaultFS { return &FaultFS{fsys: fsys} }

// Inject arms a fault. Several faults may be armed at once; a call fails
// with the first that fires.
func (f *FaultFS) Inject(ft Fault) {
	if ft.N < 1 {
		ft.N = 1
	}
	if ft.Err == nil {
		ft.Err = syscall.EIO
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, &armed{Fault: ft})
}

// Clear disarms every fault.
func (f *FaultFS) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = nil
}

// SetHook sets a function called before every operation with its kind and
// path (the old path for rename and link), before any fault is looked at.
// When it returns an error, the call fails with that error instead of
// running. nil removes the hook. The hook runs with no FaultFS lock held.
func (f *FaultFS) SetHook(hook func(op Op, path string) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hook = hook
}

// Calls returns how many calls of op were made, failed ones included.
func (f *FaultFS) Calls(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if op >= numOps {
		return 0
	}
	return f.calls[op]
}

// Injected returns how many calls failed because of a fault or the hook.
func (f *FaultFS) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// Unwrap returns the wrapped FS.
func (f *FaultFS) Unwrap() vfs.FS { return f.fsys }

// before counts a call, runs the hook and returns the fault the call must
// fail with, if any.
func (f *FaultFS) before(op Op, paths ...string) *Fault {
	f.mu.Lock()
	f.calls[op]++
	hook := f.hook
	f.mu.Unlock()
	if hook != nil {
		if err := hook(op, paths[0]); err != nil {
			f.mu.Lock()
			f.injected++
			f.mu.Unlock()
			return &Fault{Op: op, Err: err}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var hit *Fault
	for i := 0; i < len(f.faults); i++ {
		a := f.faults[i]
		if a.Op != op || (a.Match != nil && !matchAny(a.Match, paths)) {
			continue
		}
		a.seen++
		if a.seen < a.N || hit != nil {
			continue
		}
		ft := a.Fault
		hit = &ft
		if !a.Repeat {
			f.faults = append(f.faults[:i], f.faults[i+1:]...)
			i--
		}
	}
	if hit != nil {
		f.injected++
	}
	return hit
}

func matchAny(match func(string) bool, paths []string) bool {
	for _, p := range paths {
		if match(p) {
			return true
		}
	}
	return false
}

func pathErr(op Op, name string, err error) error {
	return &fs.PathError{Op: op.pathOp(), Path: name, Err: err}
}

// OpenFile counts as OpCreate when flag has O_CREATE, OpOpen otherwise.
func (f *FaultFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	op := OpOpen
	if flag&os.O_CREATE != 0 {
		op = OpCreate
	}
	if ft := f.before(op, name); ft != nil {
		return nil, pathErr(op, name, ft.Err)
	}
	file, err := f.fsys.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, name: name}, nil
}

// ReadFile counts as OpRead.
func (f *FaultFS) ReadFile(name string) ([]byte, error) {
	if ft := f.before(OpRead, name); ft != nil {
		return nil, pathErr(OpRead, name, ft.Err)
	}
	return f.fsys.ReadFile(name)
}

// Rename counts as OpRename.
func (f *FaultFS) Rename(oldname, newname string) error {
	if ft := f.before(OpRename, oldname, newname); ft != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: ft.Err}
	}
	return f.fsys.Rename(oldname, newname)
}

// Link counts as OpLink.
func (f *FaultFS) Link(oldname, newname string) error {
	if ft := f.before(OpLink, oldname, newname); ft != nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: ft.Err}
	}
	return f.fsys.Link(oldname, newname)
}

// Remove counts as OpRemove.
func (f *FaultFS) Remove(name string) error {
	if ft := f.before(OpRemove, name); ft != nil {
		return pathErr(OpRemove, name, ft.Err)
	}
	return f.fsys.Remove(name)
}

// RemoveAll counts as OpRemove (one call, however much it removes).
func (f *FaultFS) RemoveAll(name string) error {
	if ft := f.before(OpRemove, name); ft != nil {
		return pathErr(OpRemove, name, ft.Err)
	}
	return f.fsys.RemoveAll(name)
}

// Mkdir counts as OpMkdir.
func (f *FaultFS) Mkdir(name string, perm fs.FileMode) error {
	if ft := f.before(OpMkdir, name); ft != nil {
		return pathErr(OpMkdir, name, ft.Err)
	}
	return f.fsys.Mkdir(name, perm)
}

// MkdirAll counts as OpMkdir.
func (f *FaultFS) MkdirAll(name string, perm fs.FileMode) error {
	if ft := f.before(OpMkdir, name); ft != nil {
		return pathErr(OpMkdir, name, ft.Err)
	}
	return f.fsys.MkdirAll(name, perm)
}

// Stat counts as OpStat.
func (f *FaultFS) Stat(name string) (fs.FileInfo, error) {
	if ft := f.before(OpStat, name); ft != nil {
		return nil, pathErr(OpStat, name, ft.Err)
	}
	return f.fsys.Stat(name)
}

// Lstat counts as OpStat.
func (f *FaultFS) Lstat(name string) (fs.FileInfo, error) {
	if ft := f.before(OpStat, name); ft != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: ft.Err}
	}
	return f.fsys.Lstat(name)
}

// ReadDir counts as OpReadDir.
func (f *FaultFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if ft := f.before(OpReadDir, name); ft != nil {
		return nil, pathErr(OpReadDir, name, ft.Err)
	}
	return f.fsys.ReadDir(name)
}

// SyncDir counts as OpSyncDir.
func (f *FaultFS) SyncDir(name string) error {
	if ft := f.before(OpSyncDir, name); ft != nil {
		return pathErr(OpSyncDir, name, ft.Err)
	}
	return f.fsys.SyncDir(name)
}

// Lchown counts as OpChown. It changes the owner when the wrapped FS can
// (the real filesystem can; see vfs.ChownLike), and does nothing
// otherwise.
func (f *FaultFS) Lchown(name string, uid, gid int) error {
	if ft := f.before(OpChown, name); ft != nil {
		return pathErr(OpChown, name, ft.Err)
	}
	if c, ok := f.fsys.(interface{ Lchown(string, int, int) error }); ok {
		return c.Lchown(name, uid, gid)
	}
	return nil
}

// faultFile is an open file of a FaultFS.
type faultFile struct {
	vfs.File

	fs   *FaultFS
	name string
}

func (f *faultFile) Read(p []byte) (int, error) {
	if ft := f.fs.before(OpRead, f.name); ft != nil {
		return 0, pathErr(OpRead, f.name, ft.Err)
	}
	return f.File.Read(p)
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if ft := f.fs.before(OpRead, f.name); ft != nil {
		return 0, pathErr(OpRead, f.name, ft.Err)
	}
	return f.File.ReadAt(p, off)
}

func (f *faultFile) Write(p []byte) (int, error) {
	ft := f.fs.before(OpWrite, f.name)
	if ft == nil {
		return f.File.Write(p)
	}
	k := ft.Written
	if k < 0 {
		k = len(p) / 2
	}
	k = min(k, len(p))
	n := 0
	if k > 0 {
		var err error
		if n, err = f.File.Write(p[:k]); err != nil {
			return n, err
		}
	}
	if ft.Short {
		return n, nil
	}
	return n, pathErr(OpWrite, f.name, ft.Err)
}

func (f *faultFile) Sync() error {
	if ft := f.fs.before(OpSync, f.name); ft != nil {
		return pathErr(OpSync, f.name, ft.Err)
	}
	return f.File.Sync()
}

func (f *faultFile) Truncate(size int64) error {
	if ft := f.fs.before(OpTruncate, f.name); ft != nil {
		return pathErr(OpTruncate, f.name, ft.Err)
	}
	return f.File.Truncate(size)
}

// Chown counts as OpChown; it changes the owner when the wrapped file can
// (see vfs.OwnLike).
func (f *faultFile) Chown(uid, gid int) error {
	if ft := f.fs.before(OpChown, f.name); ft != nil {
		return pathErr(OpChown, f.name, ft.Err)
	}
	if c, ok := f.File.(interface{ Chown(int, int) error }); ok {
		return c.Chown(uid, gid)
	}
	return nil
}

func (f *faultFile) Stat() (fs.FileInfo, error) {
	if ft := f.fs.before(OpStat, f.name); ft != nil {
		return nil, pathErr(OpStat, f.name, ft.Err)
	}
	return f.File.Stat()
}

// Close closes the underlying file even when it reports an injected
// error, as close(2) releases the descriptor whatever it returns.
func (f *faultFile) Close() error {
	ft := f.fs.before(OpClose, f.name)
	err := f.File.Close()
	if ft != nil {
		return pathErr(OpClose, f.name, ft.Err)
	}
	return err
}
