package search

import (
	"encoding/binary"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// watcher is an inotify instance, read only when a search asks whether
// anything happened (the kernel queues an event before the call that
// caused it returns, so a search after a write always finds it). Nothing
// runs between searches.
type watcher struct {
	fd  int
	gen uint64         // raised by every read that found events
	wds map[string]int // watched directory -> watch descriptor
	buf []byte
}

const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

func newWatcher() (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	return &watcher{fd: fd, wds: map[string]int{}, buf: make([]byte, 64<<10)}, nil
}

// generation reads the events queued so far and returns a count that
// differs from the last one when there were any (or the read failed, or
// the queue overflowed: IN_Q_OVERFLOW is an event too).
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
		w.gen++
		// A watch the kernel dropped (its directory removed) is
		// forgotten, so that a directory made again there is watched.
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			wd := int(int32(binary.NativeEndian.Uint32(w.buf[off:])))
			mask := binary.NativeEndian.Uint32(w.buf[off+4:])
			size := int(binary.NativeEndian.Uint32(w.buf[off+12:]))
			if mask&unix.IN_IGNORED != 0 {
				for d, x := range w.wds {
					if x == wd {
						delete(w.wds, d)
					}
				}
			}
			off += unix.SizeofInotifyEvent + size
		}
	}
}

// watch adds a watch on each of dirs not yet watched; false when one
// could not be added (the search then walks as without a watch).
func (w *watcher) watch(dirs []string) bool {
	for _, d := range dirs {
		if _, ok := w.wds[d]; ok {
			continue
		}
		wd, err := unix.InotifyAddWatch(w.fd, d, watchMask)
		if err != nil {
			return false
		}
		w.wds[d] = wd
	}
	return true
}

func (w *watcher) close() error {
	return os.NewSyscallError("close", unix.Close(w.fd))
}
