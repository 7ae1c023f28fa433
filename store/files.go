package store

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"folio/app"
)

var _ app.FileStore = (*Files)(nil)

// Files keeps generated documents under a root directory.
type Files struct {
	Root string
}

func (f *Files) path(name string) (string, error) {
	clean := filepath.Clean("/" + name)
	if clean == "/" || strings.Contains(name, "..") {
		return "", fmt.Errorf("invalid file name %q", name)
	}
	return filepath.Join(f.Root, clean), nil
}

// WriteFile writes name atomically: a temp file in the same directory,
// fsynced, then renamed over the final name, so readers never see a partial file.
func (f *Files) WriteFile(name string, write func(w io.Writer) error) (int64, error) {
	p, err := f.path(name)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return 0, err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return 0, err
	}
	if err := tmp.Sync(); err != nil {
		return 0, err
	}
	st, err := tmp.Stat()
	if err != nil {
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return 0, err
	}
	ok = true
	return st.Size(), nil
}

// OpenFile opens a stored file and returns its modification time.
func (f *Files) OpenFile(name string) (app.ReadSeekCloser, time.Time, error) {
	p, err := f.path(name)
	if err != nil {
		return nil, time.Time{}, err
	}
	fh, err := os.Open(p)
	if err != nil {
		return nil, time.Time{}, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, time.Time{}, err
	}
	return fh, st.ModTime(), nil
}

// RemoveFile deletes a stored file; a missing file is not an error.
func (f *Files) RemoveFile(name string) error {
	p, err := f.path(name)
	if err != nil {
		return err
	}
	return removeIfExists(p)
}
