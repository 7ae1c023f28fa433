package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Secret returns the 32-byte key stored at path, creating it once with
// crypto/rand (mode 0600). It signs JWTs and download links.
func Secret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if len(b) != 32 {
			return nil, fmt.Errorf("%s: expected 32 bytes, found %d", path, len(b))
		}
		return b, nil
	}
	if !os.IsNotExist(err) {
		return nil, err
	}
	b = make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), privateDirMode); err != nil {
		return nil, err
	}
	files := &Files{Root: filepath.Dir(path)}
	if _, err := files.WriteFile(filepath.Base(path), func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}); err != nil {
		return nil, err
	}
	return b, os.Chmod(path, privateFileMode)
}

// KeyDir keeps the server's keys (app.Secrets) as files NAME.key in a
// directory, <data>/keys.
type KeyDir string

// Secret returns the key called name, creating it at first use.
func (d KeyDir) Secret(_ context.Context, name string) ([]byte, error) {
	if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz") != "" {
		return nil, fmt.Errorf("key name %q: want lowercase letters", name)
	}
	return Secret(filepath.Join(string(d), name+".key"))
}
