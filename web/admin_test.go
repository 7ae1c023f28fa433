package web

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// silentSocket listens on a unix socket and accepts connections it never
// answers, like a server wedged before its handler runs.
func silentSocket(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "admin.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	return path
}

// adminSocket starts an AdminSocket whose backup is backup.
func adminSocket(t *testing.T, logs io.Writer, backup func(ctx context.Context, withFiles bool, w io.Writer) error) *AdminSocket {
	t.Helper()
	a := &AdminSocket{Path: filepath.Join(t.TempDir(), "admin.sock"), Backup: backup, Logger: slog.New(slog.NewTextHandler(logs, nil))}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestBackupClientGivesUp: the backup client does not wait forever. On a
// socket that accepts and never answers it gives up after its idle
// timeout, reporting that a server was there (so no offline backup is
// tried beside it); a stream that stops part-way fails the same way; a
// backup longer than the overall limit fails with that limit named. With
// no server at all it reports none, at once.
func TestBackupClientGivesUp(t *testing.T) {
	ctx := context.Background()
	const idle = 200 * time.Millisecond
	start := time.Now()
	served, err := (&BackupClient{Path: silentSocket(t), IdleTimeout: idle}).Fetch(ctx, false, io.Discard)
	if took := time.Since(start); !served || err == nil || !strings.Contains(err.Error(), "sent nothing for 200ms") || took > 5*time.Second {
		t.Fatalf("silent server: served %v, err %v after %v; want an idle-timeout error within seconds", served, err, took)
	}

	stalls := adminSocket(t, io.Discard, func(ctx context.Context, _ bool, w io.Writer) error {
		w.Write([]byte("part of an archive"))
		w.(interface{ Flush() }).Flush()
		<-ctx.Done()
		return ctx.Err()
	})
	served, err = (&BackupClient{Path: stalls.Path, IdleTimeout: idle}).Fetch(ctx, false, io.Discard)
	if !served || err == nil || !strings.Contains(err.Error(), "backup interrupted: the server sent nothing for 200ms") {
		t.Fatalf("stalled stream: served %v, err %v", served, err)
	}

	// A steady stream outlives the idle timeout many times over...
	steady := adminSocket(t, io.Discard, func(ctx context.Context, _ bool, w io.Writer) error {
		for i := 0; i < 20; i++ {
			w.Write([]byte{'x'})
			w.(interface{ Flush() }).Flush()
			time.Sleep(idle / 4)
		}
		return nil
	})
	var got bytes.Buffer
	if served, err := (&BackupClient{Path: steady.Path, IdleTimeout: idle}).Fetch(ctx, false, &got); !served || err != nil || got.Len() != 20 {
		t.Fatalf("steady stream: served %v, err %v, %d bytes; want 20 bytes", served, err, got.Len())
	}
	// ...but not the overall limit.
	served, err = (&BackupClient{Path: steady.Path, IdleTimeout: idle, Timeout: idle}).Fetch(ctx, false, io.Discard)
	if !served || err == nil || !strings.Contains(err.Error(), "longer than its time limit of 200ms") {
		t.Fatalf("overall limit: served %v, err %v", served, err)
	}

	start = time.Now()
	served, err = (&BackupClient{Path: filepath.Join(t.TempDir(), "admin.sock")}).Fetch(ctx, false, io.Discard)
	if served || err != nil || time.Since(start) > time.Second {
		t.Fatalf("no server: served %v, err %v after %v; want not served, no error, at once", served, err, time.Since(start))
	}
}

// TestAdminSocketServesBackupAndReportsServeFailure: the socket streams
// the archive its Backup writes; when accepting fails for good the
// failure is logged, not dropped.
func TestAdminSocketServesBackupAndReportsServeFailure(t *testing.T) {
	var logs syncBuffer
	a := adminSocket(t, &logs, func(_ context.Context, withFiles bool, w io.Writer) error {
		_, err := io.WriteString(w, map[bool]string{false: "db only", true: "db and files"}[withFiles])
		return err
	})
	var got bytes.Buffer
	if served, err := (&BackupClient{Path: a.Path}).Fetch(context.Background(), true, &got); !served || err != nil || got.String() != "db and files" {
		t.Fatalf("backup: served %v, err %v, %q", served, err, got.String())
	}
	a.ln.Close() // as if the socket failed under the server
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "admin socket stopped serving") {
		if time.Now().After(deadline) {
			t.Fatalf("Serve's failure was not logged; logs: %s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
