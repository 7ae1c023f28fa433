package store

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// WriteBackup writes a gzipped tar of a consistent copy of the SQLite and
// bbolt databases (safe while serving) plus the keys and TLS material; with
// withFiles, the generated documents too. Restore: stop folio, extract the
// archive into an empty data directory, start folio.
func WriteBackup(ctx context.Context, db *DB, b *Bolt, dataDir string, withFiles bool, w io.Writer) error {
	tmp, err := os.MkdirTemp(dataDir, ".backup-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := db.Backup(ctx, filepath.Join(tmp, "folio.db")); err != nil {
		return err
	}
	if err := b.Backup(filepath.Join(tmp, "queue.db")); err != nil {
		return err
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	add := func(path, name string) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(name), Mode: int64(st.Mode().Perm()), Size: st.Size(), ModTime: st.ModTime(), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = io.Copy(tw, f)
		return err
	}
	if err := add(filepath.Join(tmp, "folio.db"), "folio.db"); err != nil {
		return err
	}
	if err := add(filepath.Join(tmp, "queue.db"), "queue.db"); err != nil {
		return err
	}
	dirs := []string{"keys", "tls"}
	if withFiles {
		dirs = append(dirs, "files")
	}
	for _, dir := range dirs {
		root := filepath.Join(dataDir, dir)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if d.IsDir() || !d.Type().IsRegular() || filepath.Base(path)[0] == '.' {
				return nil
			}
			rel, _ := filepath.Rel(dataDir, path)
			return add(path, rel)
		})
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// BackupName is a default archive name.
func BackupName(now time.Time) string {
	return "folio-backup-" + now.UTC().Format("20060102-150405") + ".tar.gz"
}
