package s3test

import "syscall"

// sysProcAttr kills the server when the test binary dies, however it dies:
// a shared server has no other owner to stop it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
