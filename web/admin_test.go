package web

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestAdminBackupProgress: the client sees each progress report the backup
// makes (interim responses, before the archive) in order, then the archive
// whole; the server logs a line per tenth.
func TestAdminBackupProgress(t *testing.T) {
	dir, err := os.MkdirTemp("", "adm") // short: a unix socket path is limited to about 100 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var logs bytes.Buffer
	archive := bytes.Repeat([]byte("archive "), 10000)
	a := &AdminSocket{Path: filepath.Join(dir, "admin.sock"), Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Backup: func(ctx context.Context, withFiles bool, w io.Writer, progress func(copied, total int64)) error {
			for _, c := range []int64{10, 20, 25, 90, 100} {
				progress(c<<20, 100<<20)
			}
			_, err := w.Write(archive)
			return err
		}}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var got []int64
	var body bytes.Buffer
	served, err := FetchBackup(a.Path, false, &body, func(copied, total int64) {
		if total != 100<<20 {
			t.Errorf("total %d", total)
		}
		got = append(got, copied>>20)
	})
	if err != nil || !served {
		t.Fatal(served, err)
	}
	if want := []int64{10, 20, 25, 90, 100}; !slices.Equal(got, want) {
		t.Fatalf("progress %v, want %v", got, want)
	}
	if !bytes.Equal(body.Bytes(), archive) {
		t.Fatalf("archive of %d bytes, want %d", body.Len(), len(archive))
	}
	// 10 and 20 are tenths of their own; 25 shares 20's.
	if n := bytes.Count(logs.Bytes(), []byte(`msg="backup progress"`)); n != 4 {
		t.Fatalf("%d progress log lines, want 4:\n%s", n, logs.String())
	}
}
