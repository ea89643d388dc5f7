package compaction

import (
	"runtime"
	"time"
)

// Shell returns a Command that runs cmdline with the system shell ("sh
// -c" on Unix, "cmd /C" on Windows), as 'sessctl compact --summary-cmd'
// does. json, timeout and maxOutput are the Command's fields, but a
// maxOutput of 0 means no bound here (not DefaultMaxOutput).
func Shell(cmdline string, json bool, timeout time.Duration, maxOutput int64) *Command {
	shell, flag := "sh", "-c"
	if runtime.GOOS == "windows" {
		shell, flag = "cmd", "/C"
	}
	if maxOutput == 0 {
		maxOutput = -1 // no limit
	}
	return &Command{Path: shell, Args: []string{flag, cmdline}, JSON: json, Timeout: timeout, MaxOutput: maxOutput}
}
