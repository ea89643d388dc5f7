//go:build !unix

package compaction

import "os/exec"

// setProcessGroup leaves the default: cancellation kills the process.
func setProcessGroup(*exec.Cmd) {}

// killGroup has no group to kill: children the command left running are
// left (Windows has no process group to find them by).
func killGroup(*exec.Cmd) {}
