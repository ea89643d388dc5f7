package search

import (
	"errors"
	"os"

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
	buf  []byte
}

const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

func newWatcher() (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	return &watcher{fd: fd, wds: map[string]int{}, refs: map[int]int{}, buf: make([]byte, 64<<10)}, nil
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
			}
			return w.gen
		}
		w.gen++ // (the events are counted, not decoded)
	}
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
		w.release(old)
	}
	w.wds[dir] = wd
	w.refs[wd]++
	return true
}

// release drops one path's use of wd, removing the watch when no path
// uses it any more.
func (w *watcher) release(wd int) {
	if w.refs[wd]--; w.refs[wd] <= 0 {
		delete(w.refs, wd)
		_, _ = unix.InotifyRmWatch(w.fd, uint32(wd)) // gone already when its directory was removed
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
