package store

import (
	"archive/tar"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	gzip "github.com/klauspost/compress/gzip"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"modernc.org/sqlite"
)

// backupStep is how many pages one step of a backup copies (4 MB of 4 KB
// pages); between steps the copy reports progress and checks its context.
var backupStep int32 = 1024

// Backup writes a consistent copy of the database to path, safe while the
// server runs, and calls progress (when not nil) after each step with the
// bytes copied so far and the database's size.
//
// The copy is SQLite's online backup, page by page, on a connection of the
// reader pool inside one read transaction. In WAL mode a reader neither
// waits for the writer nor holds it up: writes go on committing during the
// copy, which holds the database as it was when the copy began (a write by
// another connection would restart a copy made without that transaction).
// VACUUM INTO on the writer connection, as before, held every write back
// for the whole copy (docs/decisions.md, Storage).
func (db *DB) Backup(ctx context.Context, path string, progress func(copied, total int64)) error {
	if err := privateFile(path, true); err != nil { // SQLite writes into the file and keeps its mode
		return err
	}
	conn, err := db.read.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN`); err != nil {
		return err
	}
	defer func() {
		if _, err := conn.ExecContext(context.Background(), `ROLLBACK`); err != nil {
			// A reader left inside the transaction would serve this
			// snapshot forever: the pool drops it instead.
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	// BEGIN starts nothing yet: the first read fixes the snapshot that
	// every step then copies.
	var pageSize int64
	if err := conn.QueryRowContext(ctx, `SELECT page_size FROM pragma_page_size(), (SELECT COUNT(*) FROM sqlite_schema)`).Scan(&pageSize); err != nil {
		return err
	}
	return conn.Raw(func(dc any) error {
		src, ok := dc.(interface {
			NewBackup(dst string) (*sqlite.Backup, error)
		})
		if !ok {
			return errors.New("store: the SQLite driver has no online backup")
		}
		bk, err := src.NewBackup(scratchURI(path))
		if err != nil {
			return err
		}
		for {
			more, err := bk.Step(backupStep)
			if err == nil && progress != nil {
				total := int64(bk.PageCount())
				progress((total-int64(bk.Remaining()))*pageSize, total*pageSize)
			}
			if err == nil && more {
				err = ctx.Err()
			}
			if err != nil || !more {
				return errors.Join(err, bk.Finish())
			}
		}
	})
}

// scratchURI names path for a connection that writes a throw-away copy:
// no rollback journal and no fsync. The copy is read into the archive and
// deleted; only the archive needs to reach the disk (BackupFile syncs it).
func scratchURI(path string) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(OFF)")
	q.Add("_pragma", "synchronous(OFF)")
	return (&url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}).String()
}

// WriteBackup writes a gzipped tar of a consistent copy of the SQLite and
// bbolt databases (safe while serving) plus the keys, the TLS material and
// the teams' assets; with withFiles, the generated documents and avatars too. progress, when not nil, follows
// the copy of the SQLite database (DB.Backup), the part that takes long.
// Restore: stop folio, extract the archive into an empty data directory,
// start folio.
func WriteBackup(ctx context.Context, db *DB, b *Bolt, dataDir string, withFiles bool, w io.Writer, progress func(copied, total int64)) error {
	tmp, err := os.MkdirTemp(dataDir, ".backup-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := db.Backup(ctx, filepath.Join(tmp, "folio.db"), progress); err != nil {
		return err
	}
	if err := b.Backup(filepath.Join(tmp, "queue.db")); err != nil {
		return err
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	add := func(path, name string) error {
		f, err := os.Open(path)
		if os.IsNotExist(err) && filepath.Dir(name) == "docs" {
			return nil // a segment removed since the walk listed it held only deleted documents
		}
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
		// As long as it was when opened: the segment appended to grows
		// meanwhile (its bytes past this are named by no row of the copy).
		_, err = io.CopyN(tw, f, hdr.Size)
		return err
	}
	if err := add(filepath.Join(tmp, "folio.db"), "folio.db"); err != nil {
		return err
	}
	if err := add(filepath.Join(tmp, "queue.db"), "queue.db"); err != nil {
		return err
	}
	// Assets are the teams' own files, not documents Folio can make again:
	// they are always in the archive. (Written after the database copy, so
	// an asset uploaded meanwhile may come along without its record; one
	// deleted meanwhile keeps its record and fails to render.)
	// The documents the database keeps are in docs/ (its segments,
	// docseg.go): always in the archive, as when their bytes were rows.
	// Segments are only appended to, so those copied after the database
	// hold every document it names (a segment removed meanwhile held only
	// documents deleted meanwhile).
	dirs := []string{"keys", "tls", "docs", filepath.Join("files", "assets")}
	if withFiles {
		dirs = []string{"keys", "tls", "docs", "files"}
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
// progress follows the copy of the SQLite database written from the files
// (live reports its own).
func BackupFile(ctx context.Context, dataDir, out string, withFiles bool, live func(w io.Writer) (served bool, err error), progress func(copied, total int64)) (fromServer bool, err error) {
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
		if err := backupOffline(ctx, dataDir, withFiles, f, progress); err != nil {
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
func backupOffline(ctx context.Context, dataDir string, withFiles bool, w io.Writer, progress func(copied, total int64)) error {
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
	return WriteBackup(ctx, db, b, dataDir, withFiles, w, progress)
}

// BackupName is a default archive name.
func BackupName(now time.Time) string {
	return "folio-backup-" + now.UTC().Format("20060102-150405") + ".tar.gz"
}
