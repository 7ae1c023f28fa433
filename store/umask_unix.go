//go:build unix

package store

import "syscall"

// RestrictUmask makes every file and directory the server creates private
// to its user even where a mode is not given explicitly (a library's temp
// file, a socket before its chmod). The data directory's files get 0600
// and 0700 explicitly as well (store.PrivateDir); this is the second line.
// It is set for `folio serve` only: the umask is process-wide, and tests
// that boot Main in-process check the explicit modes.
func RestrictUmask() { syscall.Umask(0o077) }
