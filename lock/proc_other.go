//go:build !linux

package lock

import "errors"

var errNoProc = errors.New("process start time is only read on linux")

// readProcStat is not implemented outside Linux; callers rely on pidAlive.
func readProcStat(int) (procStat, error) { return procStat{}, errNoProc }

// bootID is "" outside Linux.
func bootID() string { return "" }
