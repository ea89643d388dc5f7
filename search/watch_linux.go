package search

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watcher is an inotify instance, read only when a search asks whether
// anything happened (the kernel queues an event before the call that
// caused it returns, so a search after a write always finds it). Nothing
// runs between searches.
type watcher struct {
	fd   int
	gen  uint64         // raised by every read that found events
	wds  map[string]int // watched directory -> watch descriptor
	refs map[int]int    // watch descriptor -> how many paths in wds name it
	dirs map[int]string // watch descriptor -> a path in wds that names it
	buf  []byte

	// Since mark: the files written to or whose attributes changed
	// (changed), or that something else happened (dirty: an entry made,
	// removed or renamed, a directory's own event, a lost event, a
	// watch named by several paths, too many files).
	changed map[string]bool
	dirty   bool
}

// maxChanged bounds the files a watcher names as changed; past it, it
// only says that something happened.
const maxChanged = 4096

// fileEvents are the events that change a file but not which files there
// are.
const fileEvents = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE

const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

func newWatcher() (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	return &watcher{fd: fd, wds: map[string]int{}, refs: map[int]int{}, dirs: map[int]string{}, buf: make([]byte, 64<<10),
		changed: map[string]bool{}, dirty: true}, nil
}

// generation reads the events queued so far and returns a count that
// differs from the last one when there were any (or the read failed, or
// the queue overflowed: IN_Q_OVERFLOW is an event too). Which watches
// the events name does not matter: every walk watches its directories
// again (watchAll).
func (w *watcher) generation() uint64 {
	for {
		n, err := unix.Read(w.fd, w.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			if !errors.Is(err, unix.EAGAIN) {
				w.gen++ // cannot tell: count it as a change
				w.dirty = true
			}
			return w.gen
		}
		w.gen++
		w.decode(w.buf[:n])
	}
}

// decode records what the events in b say changed (see changed, dirty).
func (w *watcher) decode(b []byte) {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(b) {
			w.dirty = true
			return
		}
		name := string(bytes.TrimRight(b[unix.SizeofInotifyEvent:end], "\x00"))
		b = b[end:]
		if w.dirty {
			continue
		}
		dir, ok := w.dirs[int(ev.Wd)]
		if !ok || w.refs[int(ev.Wd)] != 1 || name == "" || ev.Mask&unix.IN_ISDIR != 0 || ev.Mask&^uint32(fileEvents) != 0 || len(w.changed) >= maxChanged {
			w.dirty = true
			continue
		}
		w.changed[filepath.Join(dir, name)] = true
	}
}

// mark begins a new record of the files changed.
func (w *watcher) mark() {
	clear(w.changed)
	w.dirty = false
}

// changes returns the files changed since mark (read them with
// generation first), and false when more than that may have happened.
func (w *watcher) changes() ([]string, bool) {
	if w.dirty {
		return nil, false
	}
	out := make([]string, 0, len(w.changed))
	for p := range w.changed {
		out = append(out, p)
	}
	return out, true
}

// add watches dir (again: inotify_add_watch of a directory already
// watched returns its descriptor; a path whose directory was replaced,
// renamed away or removed gets the new directory's), returning false
// when it cannot.
func (w *watcher) add(dir string) bool {
	wd, err := unix.InotifyAddWatch(w.fd, dir, watchMask)
	if err != nil {
		return false
	}
	if old, ok := w.wds[dir]; ok {
		if old == wd {
			return true
		}
		delete(w.wds, dir)
		w.release(old)
	}
	w.wds[dir] = wd
	w.refs[wd]++
	w.dirs[wd] = dir
	return true
}

// release drops one path's use of wd (the path is out of wds already),
// removing the watch when no path uses it any more.
func (w *watcher) release(wd int) {
	if w.refs[wd]--; w.refs[wd] <= 0 {
		delete(w.refs, wd)
		delete(w.dirs, wd)
		_, _ = unix.InotifyRmWatch(w.fd, uint32(wd)) // gone already when its directory was removed
		return
	}
	for d, v := range w.wds { // a path still naming it
		if v == wd {
			w.dirs[wd] = d
			break
		}
	}
}

// keep removes the watches of every directory not in dirs (moved out of
// the stores, removed, or of stores no longer searched).
func (w *watcher) keep(dirs map[string]bool) {
	for d, wd := range w.wds {
		if !dirs[d] {
			delete(w.wds, d)
			w.release(wd)
		}
	}
}

func (w *watcher) close() error {
	return os.NewSyscallError("close", unix.Close(w.fd))
}
