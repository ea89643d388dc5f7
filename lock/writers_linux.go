package lock

import (
	"bytes"
	"io/fs"
	"os"
	"strconv"
	"syscall"

	"github.com/sessctl/sessctl/layout/vfs"
)

// fileWriters reads the kernel's process table through the real
// filesystem (vfs.OS): it is the system's state, never a file of a
// caller's FS. The descriptors are compared with syscall.Stat, which
// follows /proc's links to the open files.

func fileWriters(fi fs.FileInfo, skip []int) ([]Writer, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, false
	}
	procs, err := vfs.OS().ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	self := os.Getpid()
	var ws []Writer
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid <= 0 {
			continue
		}
		dir := "/proc/" + p.Name() + "/fd/"
		fds, err := vfs.OS().ReadDir(dir)
		if err != nil {
			continue // gone meanwhile, or another user's process
		}
	fds:
		for _, d := range fds {
			var t syscall.Stat_t
			if syscall.Stat(dir+d.Name(), &t) != nil || t.Dev != st.Dev || t.Ino != st.Ino {
				continue
			}
			fd, err := strconv.Atoi(d.Name())
			if err != nil {
				continue
			}
			if pid == self {
				for _, s := range skip {
					if s == fd {
						continue fds
					}
				}
			}
			if !openForWriting(p.Name(), d.Name()) {
				continue
			}
			ws = append(ws, Writer{PID: pid, Command: commandName(p.Name()), FD: fd})
		}
	}
	return ws, true
}

// openForWriting reports whether descriptor fd of process pid was opened
// with O_WRONLY or O_RDWR, from the "flags:" line (octal) of its fdinfo.
// A descriptor whose flags cannot be read counts as a writer: wrongly
// refusing a write is better than cutting another process's line.
func openForWriting(pid, fd string) bool {
	data, err := vfs.OS().ReadFile("/proc/" + pid + "/fdinfo/" + fd)
	if err != nil {
		return true
	}
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		v, ok := bytes.CutPrefix(line, []byte("flags:"))
		if !ok {
			continue
		}
		flags, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 64)
		if err != nil {
			return true
		}
		return flags&syscall.O_ACCMODE != syscall.O_RDONLY
	}
	return true
}

// commandName reads /proc/<pid>/comm.
func commandName(pid string) string {
	data, err := vfs.OS().ReadFile("/proc/" + pid + "/comm")
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(data))
}
