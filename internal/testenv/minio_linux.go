package testenv

import (
	"os/exec"
	"syscall"
)

// setDeathSignal kills the server when the test process dies, so a killed
// test run leaves no server behind.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
