package store

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
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
		// 0600 whatever the file's mode: extracted, the archive is a data
		// directory again, private like the one it came from.
		hdr := &tar.Header{Name: filepath.ToSlash(name), Mode: int64(privateFileMode), Size: st.Size(), ModTime: st.ModTime(), Typeflag: tar.TypeReg}
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

// BackupFile writes a backup archive of the data directory to out, first
// as out.partial, renamed once complete and synced. A running server holds
// the bbolt file, so live, when set, is asked first to stream the archive
// from it; it reports served false when no server answered, and the archive
// is then written from the files directly. fromServer says which happened.
func BackupFile(ctx context.Context, dataDir, out string, withFiles bool, live func(w io.Writer) (served bool, err error)) (fromServer bool, err error) {
	if out == "" {
		return false, fmt.Errorf("backup needs --out FILE")
	}
	if _, err := os.Stat(filepath.Join(dataDir, "folio.db")); err != nil {
		return false, fmt.Errorf("no Folio database in %s (--data)", dataDir)
	}
	tmp := out + ".partial"
	f, err := createPrivate(tmp) // the archive holds everything the data directory does
	if err != nil {
		return false, err
	}
	defer func() {
		f.Close()
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if live != nil {
		if fromServer, err = live(f); err != nil {
			return fromServer, err
		}
	}
	if !fromServer {
		if err := backupOffline(ctx, dataDir, withFiles, f); err != nil {
			return false, err
		}
	}
	if err := f.Sync(); err != nil {
		return fromServer, err
	}
	return fromServer, os.Rename(tmp, out)
}

// backupOffline writes the archive from the database files of a data
// directory no server has open.
func backupOffline(ctx context.Context, dataDir string, withFiles bool, w io.Writer) error {
	db, err := Open(ctx, filepath.Join(dataDir, "folio.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	b, err := OpenBolt(filepath.Join(dataDir, "queue.db"))
	if err != nil {
		return err
	}
	defer b.Close()
	return WriteBackup(ctx, db, b, dataDir, withFiles, w)
}

// BackupName is a default archive name.
func BackupName(now time.Time) string {
	return "folio-backup-" + now.UTC().Format("20060102-150405") + ".tar.gz"
}
