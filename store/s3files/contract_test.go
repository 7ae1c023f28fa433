package s3files_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"folio/app"
	"folio/internal/s3test"
	"folio/store"
	"folio/store/s3files"
)

// backends are the FileStores every contract case runs against: the
// embedded mode's directory and S3 (a real versitygw).
func backends(t *testing.T) map[string]func(t *testing.T) app.FileStore {
	return map[string]func(t *testing.T) app.FileStore{
		"local": func(t *testing.T) app.FileStore { return &store.Files{Root: t.TempDir()} },
		"s3": func(t *testing.T) app.FileStore {
			return openS3(t, s3test.Shared(t), "tenant/files", s3files.DefaultPartSize)
		},
	}
}

// openS3 opens a store on a fresh bucket of srv, as --files-url would.
func openS3(t *testing.T, srv *s3test.Server, prefix string, partSize uint64) *s3files.Store {
	t.Helper()
	cfg, err := s3files.ParseURL(srv.URL(srv.NewBucket(t), prefix), s3test.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.PartSize = partSize
	s, err := s3files.Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func write(t *testing.T, files app.FileStore, name string, data []byte) {
	t.Helper()
	n, err := files.WriteFile(name, func(w io.Writer) error { _, err := w.Write(data); return err })
	if err != nil || n != int64(len(data)) {
		t.Fatalf("write %s: %d bytes, %v; want %d", name, n, err, len(data))
	}
}

func readAll(t *testing.T, files app.FileStore, name string) []byte {
	t.Helper()
	f, _, err := files.OpenFile(name)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return b
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// TestFileStoreContract is what the service relies on from a FileStore,
// as one table run against both backends.
func TestFileStoreContract(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, files app.FileStore)
	}{
		{"write then open reads the same bytes, size and time", func(t *testing.T, files app.FileStore) {
			data := pattern(100 << 10)
			before := time.Now().Add(-2 * time.Second)
			write(t, files, "team_1/job_1.pdf", data)
			f, mod, err := files.OpenFile("team_1/job_1.pdf")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if mod.Before(before) || mod.After(time.Now().Add(2*time.Second)) {
				t.Errorf("modification time %v, want about now", mod)
			}
			if size, err := f.Seek(0, io.SeekEnd); err != nil || size != int64(len(data)) {
				t.Fatalf("size by seeking to the end: %d %v, want %d", size, err, len(data))
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			if got, _ := io.ReadAll(f); !bytes.Equal(got, data) {
				t.Fatalf("read %d bytes, not the %d written", len(got), len(data))
			}
		}},
		{"seeking reads any range", func(t *testing.T, files app.FileStore) {
			data := pattern(300 << 10)
			write(t, files, "team_1/ranges.xlsx", data)
			f, _, err := files.OpenFile("team_1/ranges.xlsx")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, r := range []struct{ off, n int64 }{{0, 10}, {150 << 10, 4096}, {7, 1}, {int64(len(data)) - 100, 100}, {1000, 200 << 10}} {
				if _, err := f.Seek(r.off, io.SeekStart); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, r.n)
				if _, err := io.ReadFull(f, got); err != nil {
					t.Fatalf("range %d+%d: %v", r.off, r.n, err)
				}
				if !bytes.Equal(got, data[r.off:r.off+r.n]) {
					t.Fatalf("range %d+%d: wrong bytes", r.off, r.n)
				}
			}
			// Relative seeks from where the last read stopped.
			if pos, err := f.Seek(-50, io.SeekCurrent); err != nil || pos != 1000+(200<<10)-50 {
				t.Fatalf("seek current: %d %v", pos, err)
			}
			if got, _ := io.ReadAll(f); !bytes.Equal(got, data[1000+(200<<10)-50:]) {
				t.Fatal("read to the end after a relative seek: wrong bytes")
			}
			if n, err := f.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Fatalf("read at the end: %d %v, want EOF", n, err)
			}
		}},
		{"ServeContent answers full and ranged requests with the right lengths", func(t *testing.T, files app.FileStore) {
			data := pattern(200 << 10)
			write(t, files, "team_1/served.pdf", data)
			for _, c := range []struct {
				rng        string
				status     int
				start, end int
			}{{"", 200, 0, len(data)}, {"bytes=100-199", 206, 100, 200}, {"bytes=-1000", 206, len(data) - 1000, len(data)}, {"bytes=150000-", 206, 150000, len(data)}} {
				f, mod, err := files.OpenFile("team_1/served.pdf")
				if err != nil {
					t.Fatal(err)
				}
				req := httptest.NewRequest("GET", "/d", nil)
				if c.rng != "" {
					req.Header.Set("Range", c.rng)
				}
				rec := httptest.NewRecorder()
				rec.Header().Set("Content-Type", "application/pdf")
				http.ServeContent(rec, req, "", mod, f)
				f.Close()
				if rec.Code != c.status || rec.Header().Get("Content-Length") != strconv.Itoa(c.end-c.start) || !bytes.Equal(rec.Body.Bytes(), data[c.start:c.end]) {
					t.Fatalf("Range %q: %d, Content-Length %s, %d bytes; want %d, %d", c.rng, rec.Code, rec.Header().Get("Content-Length"), rec.Body.Len(), c.status, c.end-c.start)
				}
			}
		}},
		{"an overwrite replaces the whole file", func(t *testing.T, files app.FileStore) {
			write(t, files, "avatars/usr_1.png", pattern(70<<10))
			write(t, files, "avatars/usr_1.png", []byte("small"))
			if got := readAll(t, files, "avatars/usr_1.png"); string(got) != "small" {
				t.Fatalf("after overwrite: %d bytes", len(got))
			}
		}},
		{"a write that fails leaves no file and the earlier one intact", func(t *testing.T, files app.FileStore) {
			earlier := pattern(80 << 10)
			write(t, files, "team_1/job_1.pdf", earlier)
			boom := errors.New("render died")
			half := func(w io.Writer) error {
				if _, err := w.Write(pattern(90 << 10)); err != nil {
					return err
				}
				return boom
			}
			if _, err := files.WriteFile("team_1/job_2.pdf", half); !errors.Is(err, boom) {
				t.Fatalf("failed write returned %v", err)
			}
			if _, err := files.WriteFile("team_1/job_1.pdf", half); !errors.Is(err, boom) {
				t.Fatalf("failed overwrite returned %v", err)
			}
			if _, _, err := files.OpenFile("team_1/job_2.pdf"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("file of a failed write: %v", err)
			}
			if got := readAll(t, files, "team_1/job_1.pdf"); !bytes.Equal(got, earlier) {
				t.Fatal("earlier file changed by a failed overwrite")
			}
		}},
		{"remove deletes; removing a missing file is no error", func(t *testing.T, files app.FileStore) {
			write(t, files, "team_1/job_1.pdf", []byte("%PDF-"))
			if err := files.RemoveFile("team_1/job_1.pdf"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := files.OpenFile("team_1/job_1.pdf"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("open after remove: %v", err)
			}
			if err := files.RemoveFile("team_1/job_1.pdf"); err != nil {
				t.Fatalf("remove twice: %v", err)
			}
			if err := files.RemoveFile("team_9/never.pdf"); err != nil {
				t.Fatalf("remove never written: %v", err)
			}
		}},
		{"a missing file is fs.ErrNotExist, not unavailable", func(t *testing.T, files app.FileStore) {
			_, _, err := files.OpenFile("team_1/nothing.pdf")
			if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, app.ErrFilesUnavailable) {
				t.Fatalf("missing: %v", err)
			}
		}},
		{"names that leave the root are refused", func(t *testing.T, files app.FileStore) {
			for _, name := range []string{"", "/", "../x", "team_1/../../x"} {
				if _, err := files.WriteFile(name, func(w io.Writer) error { return nil }); err == nil {
					t.Errorf("write %q: no error", name)
				}
				if _, _, err := files.OpenFile(name); err == nil {
					t.Errorf("open %q: no error", name)
				}
			}
		}},
		{"an empty file", func(t *testing.T, files app.FileStore) {
			write(t, files, "team_1/empty.csv", nil)
			if got := readAll(t, files, "team_1/empty.csv"); len(got) != 0 {
				t.Fatalf("%d bytes", len(got))
			}
		}},
		{"a large file written in pieces (several multipart parts on S3)", func(t *testing.T, files app.FileStore) {
			data := pattern(13<<20 + 12345) // three 5 MiB parts, the last short
			n, err := files.WriteFile("team_1/big.pdf", func(w io.Writer) error {
				for off := 0; off < len(data); off += 64 << 10 {
					if _, err := w.Write(data[off:min(off+64<<10, len(data))]); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil || n != int64(len(data)) {
				t.Fatalf("write: %d %v", n, err)
			}
			got := readAll(t, files, "team_1/big.pdf")
			if sha256.Sum256(got) != sha256.Sum256(data) {
				t.Fatalf("read back %d bytes, not the %d written", len(got), len(data))
			}
			f, _, err := files.OpenFile("team_1/big.pdf")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			f.Seek(10<<20, io.SeekStart) // across the part boundary
			buf := make([]byte, 1<<20)
			if _, err := io.ReadFull(f, buf); err != nil || !bytes.Equal(buf, data[10<<20:11<<20]) {
				t.Fatalf("range across parts: %v", err)
			}
		}},
		{"start-up cleanup finds nothing to remove after clean writes", func(t *testing.T, files app.FileStore) {
			write(t, files, "team_1/job_1.pdf", []byte("%PDF-"))
			if n, err := files.RemoveTempFiles(); err != nil || n != 0 {
				t.Fatalf("%d %v", n, err)
			}
			if got := readAll(t, files, "team_1/job_1.pdf"); string(got) != "%PDF-" {
				t.Fatal("cleanup removed a finished file")
			}
		}},
	}
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					files := open(t)
					if _, ok := files.(*s3files.Store); ok && strings.Contains(c.name, "large") {
						files = openS3(t, s3test.Shared(t), "big", 5<<20) // S3's smallest part
					}
					c.run(t, files)
				})
			}
		})
	}
}
