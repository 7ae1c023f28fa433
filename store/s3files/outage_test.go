package s3files_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"folio/app"
	"folio/internal/s3test"
	"folio/store/s3files"
)

// TestStoreUnavailable: with the server stopped every operation fails as
// app.ErrFilesUnavailable (a 503, a job retried), never as a missing
// file; once it is back, the files written before are all there.
func TestStoreUnavailable(t *testing.T) {
	srv := s3test.Start(t)
	files := openS3(t, srv, "p", 5<<20)
	data := pattern(100 << 10)
	write(t, files, "team_1/job_1.pdf", data)
	srv.Stop()

	if _, _, err := files.OpenFile("team_1/job_1.pdf"); !errors.Is(err, app.ErrFilesUnavailable) || app.ErrorCode(err) != app.ECodeFilesUnavailable {
		t.Fatalf("open while down: %v", err)
	}
	if _, err := files.WriteFile("team_1/job_2.pdf", func(w io.Writer) error { _, err := w.Write(data); return err }); !errors.Is(err, app.ErrFilesUnavailable) {
		t.Fatalf("write while down: %v", err)
	}
	big := pattern(6 << 20) // past one part: the multipart path fails the same way
	if _, err := files.WriteFile("team_1/job_3.pdf", func(w io.Writer) error { _, err := w.Write(big); return err }); !errors.Is(err, app.ErrFilesUnavailable) {
		t.Fatalf("multipart write while down: %v", err)
	}
	if err := files.RemoveFile("team_1/job_1.pdf"); !errors.Is(err, app.ErrFilesUnavailable) {
		t.Fatalf("remove while down: %v", err)
	}
	if n, err := files.RemoveTempFiles(); err != nil || n != 0 {
		t.Fatalf("start-up cleanup while down must not stop the start: %d %v", n, err)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, files, "team_1/job_1.pdf"); !bytes.Equal(got, data) {
		t.Fatal("file written before the outage changed")
	}
	write(t, files, "team_1/job_2.pdf", data)
}

// TestReadBrokenMidway: a GET whose server dies while the body streams
// ends in an error, never in a clean EOF short of the size.
func TestReadBrokenMidway(t *testing.T) {
	srv := s3test.Start(t)
	files := openS3(t, srv, "p", 5<<20)
	data := pattern(24 << 20)
	write(t, files, "team_1/big.pdf", data)
	f, _, err := files.OpenFile("team_1/big.pdf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.ReadFull(f, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	n, err := io.Copy(io.Discard, f)
	if err == nil {
		if int64(1<<20)+n == int64(len(data)) {
			t.Skip("the whole body was buffered before the server stopped")
		}
		t.Fatalf("read %d of %d bytes and ended cleanly", (1<<20)+n, len(data))
	}
	if !errors.Is(err, app.ErrFilesUnavailable) {
		t.Fatalf("broken read: %v", err)
	}
}

// TestCheck: the start-up check stops a start for a missing bucket or
// refused credentials, and only warns (ErrFilesUnavailable) for a store
// that does not answer.
func TestCheck(t *testing.T) {
	srv := s3test.Shared(t)
	open := func(url string, env func(string) string) error {
		cfg, err := s3files.ParseURL(url, env)
		if err != nil {
			t.Fatal(err)
		}
		s, err := s3files.Open(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s.Check(context.Background())
	}
	if err := open(srv.URL(srv.NewBucket(t), "p"), s3test.Getenv); err != nil {
		t.Fatalf("good bucket: %v", err)
	}
	if err := open(srv.URL("no-such-bucket", "p"), s3test.Getenv); err == nil || !strings.Contains(err.Error(), "does not exist") || errors.Is(err, app.ErrFilesUnavailable) {
		t.Fatalf("missing bucket: %v", err)
	}
	wrong := func(k string) string {
		if k == "AWS_SECRET_ACCESS_KEY" {
			return "not-the-secret"
		}
		return s3test.Getenv(k)
	}
	if err := open(srv.URL(srv.NewBucket(t), "p"), wrong); err == nil || !strings.Contains(err.Error(), "refused the credentials") || strings.Contains(err.Error(), "not-the-secret") {
		t.Fatalf("wrong secret: %v", err)
	}
	if err := open("s3://b/p?endpoint=127.0.0.1:1&tls=false", s3test.Getenv); !errors.Is(err, app.ErrFilesUnavailable) {
		t.Fatalf("nothing listening: %v", err)
	}
}
