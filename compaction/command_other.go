//go:build !unix

package compaction

import "os/exec"

// setProcessGroup leaves the default: cancellation kills the process.
func setProcessGroup(*exec.Cmd) {}
