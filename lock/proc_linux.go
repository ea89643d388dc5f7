package lock

import (
	"bytes"
	"strconv"

	"github.com/sessctl/sessctl/layout/vfs"
)

// The kernel's process table is read through the real filesystem
// (vfs.OS): it is the system's state, never a file of the caller's FS.

// readProcStat reads field 3 (state) and field 22 (start time) of
// /proc/<pid>/stat.
func readProcStat(pid int) (procStat, error) {
	data, err := vfs.OS().ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(data)
}

// bootID returns the kernel's random boot id, or "" when it cannot be read.
func bootID() string {
	data, err := vfs.OS().ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(data))
}
