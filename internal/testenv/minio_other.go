//go:build !linux

package testenv

import "os/exec"

func setDeathSignal(cmd *exec.Cmd) {}
