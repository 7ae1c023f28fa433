package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"folio/app"
	"folio/store"
	"folio/store/s3files"
)

// errFilesInS3 refuses a backup with files when they are in a bucket: the
// archive holds the databases; the bucket is backed up by its own means
// (docs/deploy.md, Backups).
var errFilesInS3 = errors.New("--with-files: this server keeps its files in S3 (--files-url); the backup holds the databases, back up the bucket with the object store's own tools (versioning, replication)")

// errBackupPostgres refuses the live backup of a server on PostgreSQL:
// its records are backed up with pg_dump (docs/deploy.md, Backups).
var errBackupPostgres = errors.New("this server keeps its records in PostgreSQL (--database-url); back them up with pg_dump (docs/deploy.md, Backups)")

// openFiles opens where generated documents, assets and avatars are kept:
// <data>/files, or the S3 bucket of --files-url. A bucket that cannot be
// reached at start does not stop the server: small documents (kept in
// SQLite) are served meanwhile, and jobs needing a file wait for it. A
// bucket that does not exist, or credentials it refuses, do.
func (m *Main) openFiles(ctx context.Context) (app.FileStore, error) {
	c := &m.Config
	if c.FilesURL == "" {
		return &store.Files{Root: filepath.Join(c.Data, "files")}, nil
	}
	cfg, err := s3files.ParseURL(c.FilesURL, os.Getenv)
	if err != nil {
		return nil, err
	}
	s, err := s3files.Open(cfg, m.Logger)
	if err != nil {
		return nil, err
	}
	if err := s.Check(ctx); errors.Is(err, app.ErrFilesUnavailable) {
		m.Logger.Warn("file store unreachable at start; documents over 64 KB wait for it", "files", cfg.String(), "err", err)
	} else if err != nil {
		return nil, err
	}
	m.Logger.Info("files kept in S3", "files", cfg.String())
	return s, nil
}
