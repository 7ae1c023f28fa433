//go:build !unix

package store

// RestrictUmask does nothing where there is no umask (Windows).
func RestrictUmask() {}
