//go:build linux || darwin || freebsd

package store

import "syscall"

// FreeSpace returns the bytes available to unprivileged users on the file
// system holding dir.
func FreeSpace(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
