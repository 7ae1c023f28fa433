//go:build unix

package store

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"folio/app"
)

// withUmask sets the process umask for the test and restores it after.
func withUmask(t *testing.T, mask int) {
	t.Helper()
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

func wantMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s: mode %o, want %o", filepath.Base(path), got, want)
	}
}

// TestPermDatabases: under a umask of 0022, folio.db and the -wal and -shm
// files SQLite makes beside it are 0600, for a new database and for one an
// older version left at 0644 (with stale -wal and -shm files); so are the
// bbolt file and the copies a backup takes of both.
func TestPermDatabases(t *testing.T) {
	withUmask(t, 0o022)
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "folio.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	mustUser(t, db, "a@example.com")
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		wantMode(t, p, 0o600)
	}
	copyPath := filepath.Join(dir, "copy.db")
	if err := db.Backup(ctx, copyPath, nil); err != nil {
		t.Fatal(err)
	}
	wantMode(t, copyPath, 0o600)
	db.Close()

	// An older install: everything 0644, a -wal and -shm left behind.
	for _, p := range []string{path + "-wal", path + "-shm"} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.FindUserByEmail(ctx, "a@example.com"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		wantMode(t, p, 0o600)
	}

	boltPath := filepath.Join(dir, "queue.db")
	if err := os.WriteFile(boltPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := OpenBolt(boltPath)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	wantMode(t, boltPath, 0o600)
	if err := b.Backup(filepath.Join(dir, "queue-copy.db")); err != nil {
		t.Fatal(err)
	}
	wantMode(t, filepath.Join(dir, "queue-copy.db"), 0o600)
}

// TestPermFiles: documents, avatars and mail are 0600 in 0700 directories
// under a umask of 0022, and PrivateDir closes a data directory that
// already existed as 0755.
func TestPermFiles(t *testing.T) {
	withUmask(t, 0o022)
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := PrivateDir(root); err != nil {
		t.Fatal(err)
	}
	wantMode(t, root, 0o700)
	if err := PrivateDir(filepath.Join(root, "new", "deeper")); err != nil {
		t.Fatal(err)
	}
	wantMode(t, filepath.Join(root, "new"), 0o700)
	wantMode(t, filepath.Join(root, "new", "deeper"), 0o700)

	files := &Files{Root: filepath.Join(root, "files")}
	for _, name := range []string{"team_1/job_1.pdf", "avatars/usr_1.png"} {
		if _, err := files.WriteFile(name, func(w io.Writer) error { _, err := io.WriteString(w, "data"); return err }); err != nil {
			t.Fatal(err)
		}
		wantMode(t, filepath.Join(files.Root, name), 0o600)
		wantMode(t, filepath.Dir(filepath.Join(files.Root, name)), 0o700)
	}
	wantMode(t, files.Root, 0o700)

	mail := &Outbox{Dir: filepath.Join(root, "mail"), From: "f@example.com", Now: time.Now}
	if err := mail.Send(context.Background(), app.Mail{To: "a@example.com", Subject: "s", Body: "a link with a token"}); err != nil {
		t.Fatal(err)
	}
	wantMode(t, mail.Dir, 0o700)
	emls, _ := filepath.Glob(filepath.Join(mail.Dir, "*.eml"))
	if len(emls) != 1 {
		t.Fatalf("mail files: %v", emls)
	}
	wantMode(t, emls[0], 0o600)

	if _, err := Secret(filepath.Join(root, "keys", "jwt.key")); err != nil {
		t.Fatal(err)
	}
	wantMode(t, filepath.Join(root, "keys"), 0o700)
	wantMode(t, filepath.Join(root, "keys", "jwt.key"), 0o600)
}

// TestPermBackupFile: an archive written without a server is 0600, even
// when a partial file of that name was left 0644 by an earlier attempt.
func TestPermBackupFile(t *testing.T) {
	withUmask(t, 0o022)
	ctx := context.Background()
	data := t.TempDir()
	db, err := Open(ctx, filepath.Join(data, "folio.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, err := OpenBolt(filepath.Join(data, "queue.db"))
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	out := filepath.Join(t.TempDir(), "backup.tar.gz")
	if err := os.WriteFile(out+".partial", []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := BackupFile(ctx, data, out, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	wantMode(t, out, 0o600)
}
