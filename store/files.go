package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
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

// tempPrefix starts the names of files being written.
const tempPrefix = ".tmp-"

// WriteFile writes name atomically: a temp file in the same directory,
// fsynced, then renamed over the final name, so readers never see a partial
// file; the directory is fsynced after the rename so the new name survives a
// power loss, not only a process crash.
func (f *Files) WriteFile(name string, write func(w io.Writer) error) (int64, error) {
	p, err := f.path(name)
	if err != nil {
		return 0, err
	}
	dir := filepath.Dir(p)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, privateDirMode); err != nil {
			return 0, err
		}
		if err := syncDir(filepath.Dir(dir)); err != nil {
			return 0, err
		}
	}
	tmp, err := os.CreateTemp(dir, tempPrefix+"*") // 0600, renamed with its mode
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
	if err := syncDir(dir); err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// syncDir fsyncs a directory, making the names in it durable. Windows cannot
// open a directory for syncing; its rename is durable once it returns.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// RemoveTempFiles deletes the temp files that writes interrupted by a crash
// left under the root. Call it only when no write runs (at start-up): a
// running write's temp file would go too.
func (f *Files) RemoveTempFiles() (int, error) {
	n := 0
	err := filepath.WalkDir(f.Root, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == f.Root {
			return fs.SkipAll // nothing written yet
		}
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasPrefix(d.Name(), tempPrefix) {
			if err := removeIfExists(path); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
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
