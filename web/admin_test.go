package web

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAdminBackupProgress: the client sees each progress report the backup
// makes (interim responses, before the archive) in order, then the archive
// whole; the server logs a line per tenth.
func TestAdminBackupProgress(t *testing.T) {
	dir := shortDir(t)
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
	startAdmin(t, a)
	var got []int64
	var body bytes.Buffer
	served, err := FetchBackup(context.Background(), a.Path, false, &body, func(copied, total int64) {
		if total != 100<<20 {
			t.Errorf("total %d", total)
		}
		got = append(got, copied>>20)
	}, BackupTimeouts{})
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

// shortDir is a temporary directory with a short path: a unix socket path
// is limited to about 100 bytes.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "adm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startAdmin serves a on its socket until the test ends, failing the test
// if serving ends with an error.
func startAdmin(t *testing.T, a *AdminSocket) {
	t.Helper()
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- a.Serve() }()
	t.Cleanup(func() {
		a.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve after Close: %v, want nil", err)
		}
	})
}

// testTimeouts are short, so that the tests of the idle timeout take a
// fraction of a second instead of its default minute.
var testTimeouts = BackupTimeouts{Connect: time.Second, Idle: 300 * time.Millisecond}

// TestAdminBackupSilentServer: a server that accepts the connection and
// never answers fails the backup after the idle timeout, with an error that
// names the socket and what to do, instead of hanging the command.
func TestAdminBackupSilentServer(t *testing.T) {
	path := filepath.Join(shortDir(t), "admin.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c // held open, never read nor written
		}
	}()
	served, err := FetchBackup(context.Background(), path, false, io.Discard, func(int64, int64) {}, testTimeouts)
	if !served || err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "sent no progress and no data for 300ms") ||
		!strings.Contains(err.Error(), "see its log") {
		t.Fatalf("served %v, err %v", served, err)
	}
	select {
	case c := <-accepted:
		c.Close()
	default:
		t.Fatal("the server never saw a connection")
	}
}

// TestAdminBackupStallsMidStream: a backup that stops sending, after some
// progress and after some of the archive, fails after the idle timeout
// (each report or byte restarts it), and the server sees the client go.
func TestAdminBackupStallsMidStream(t *testing.T) {
	for _, stage := range []string{"progress", "archive"} {
		t.Run(stage, func(t *testing.T) {
			var logs bytes.Buffer
			ended := make(chan error, 1)
			a := &AdminSocket{Path: filepath.Join(shortDir(t), "admin.sock"), Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				Backup: func(ctx context.Context, withFiles bool, w io.Writer, progress func(copied, total int64)) error {
					progress(1<<20, 10<<20)
					if stage == "archive" {
						progress(10<<20, 10<<20)
						w.Write(bytes.Repeat([]byte("archive "), 8192)) // more than the response buffers
					}
					<-ctx.Done() // stuck until the client gives up
					ended <- ctx.Err()
					return ctx.Err()
				}}
			startAdmin(t, a)
			var got []int64
			var body bytes.Buffer
			served, err := FetchBackup(context.Background(), a.Path, false, &body, func(copied, total int64) { got = append(got, copied>>20) }, testTimeouts)
			if !served || err == nil || !strings.Contains(err.Error(), a.Path) || !strings.Contains(err.Error(), "sent no progress and no data for 300ms") {
				t.Fatalf("served %v, err %v", served, err)
			}
			want := []int64{1}
			if stage == "archive" {
				want = []int64{1, 10}
				if body.Len() == 0 {
					t.Fatal("no archive bytes before the stall")
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("progress %v, want %v", got, want)
			}
			if err := <-ended; !errors.Is(err, context.Canceled) {
				t.Fatalf("server's backup ended with %v, want its request cancelled", err)
			}
		})
	}
}

// TestAdminBackupTimeout: the overall limit (the command's --timeout) ends
// a backup that keeps reporting progress, which the idle timeout (here its
// default minute) would let run on.
func TestAdminBackupTimeout(t *testing.T) {
	a := &AdminSocket{Path: filepath.Join(shortDir(t), "admin.sock"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Backup: func(ctx context.Context, withFiles bool, w io.Writer, progress func(copied, total int64)) error {
			for i := int64(0); ctx.Err() == nil; i++ {
				progress(i%100, 100)
				time.Sleep(10 * time.Millisecond)
			}
			return ctx.Err()
		}}
	startAdmin(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	served, err := FetchBackup(ctx, a.Path, false, io.Discard, func(int64, int64) {}, BackupTimeouts{})
	if !served || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), a.Path) {
		t.Fatalf("served %v, err %v", served, err)
	}
}

// TestAdminBackupNoServer: with no socket, or a socket nobody listens on
// (a server that died), the client reports that no server answered, so
// the command reads the files itself.
func TestAdminBackupNoServer(t *testing.T) {
	dir := shortDir(t)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "stale.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	for _, name := range []string{"missing.sock", "stale.sock"} {
		served, err := FetchBackup(context.Background(), filepath.Join(dir, name), false, io.Discard, nil, testTimeouts)
		if served || err != nil {
			t.Fatalf("%s: served %v, err %v", name, served, err)
		}
	}
}

// failingListener fails its Accept the way a broken socket would.
type failingListener struct{ net.Listener }

func (failingListener) Accept() (net.Conn, error) { return nil, errors.New("accept: broken") }

// TestAdminServeError: Serve returns the listener's failure, and nil after
// Close (the normal end).
func TestAdminServeError(t *testing.T) {
	a := &AdminSocket{Path: filepath.Join(shortDir(t), "admin.sock"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.ln = failingListener{a.ln}
	if err := a.Serve(); err == nil || !strings.Contains(err.Error(), "accept: broken") {
		t.Fatalf("Serve: %v, want the listener's error", err)
	}
}
