//go:build !(linux || darwin || freebsd)

package store

// FreeSpace is not measured on this platform.
func FreeSpace(string) (uint64, error) { return 0, errNoStatfs }
