package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Modes of everything Folio writes. The data directory holds password
// hashes, TOTP and webhook secrets, signing and TLS keys and every team's
// documents and mail, so nothing in it is for anyone but the server's
// user: files are 0600 and directories 0700, set explicitly wherever they
// are created, so neither the umask nor the mode of a directory that
// already existed widens them (docs/decisions.md, Storage).
const (
	privateFileMode fs.FileMode = 0o600
	privateDirMode  fs.FileMode = 0o700
)

// PrivateDir creates dir and any missing parents as 0700 and makes dir
// itself 0700 when it already existed with a wider mode: with the data
// directory closed, whatever an older version left inside at a wider mode
// cannot be reached by other users either.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, privateDirMode); err != nil {
		return err
	}
	return restrict(dir, privateDirMode)
}

// privateFile makes path 0600 when it exists with a wider mode and, with
// create, creates it empty as 0600 when it is missing.
func privateFile(path string, create bool) error {
	if create {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, privateFileMode)
		if err == nil {
			return f.Close()
		}
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	err := restrict(path, privateFileMode)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// restrict sets mode on path when its mode lets anyone but the owner in.
// A path that is private already is left alone, so an operator command run
// by another user (root) on a private data directory changes nothing.
func restrict(path string, mode fs.FileMode) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("make %s private (mode %04o): %w", path, mode, err)
	}
	return nil
}

// createPrivate creates (or truncates) path for writing as 0600, also when
// it existed with a wider mode.
func createPrivate(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, privateFileMode)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(privateFileMode); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
