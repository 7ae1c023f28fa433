package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"folio/web"
)

// hangingAdminSocket listens on data's admin socket like a running server
// that accepts connections and then never answers.
func hangingAdminSocket(t *testing.T, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(data, "folio.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(data, "admin.sock"))
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, never answered
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
}

// TestAdminBackupHangingServer: a server that accepts the backup request
// and never answers does not hang folio admin backup: --timeout ends it,
// and so does the idle timeout (shortened here from its minute), each with
// an error that says what happened and what to do, and no archive left.
func TestAdminBackupHangingServer(t *testing.T) {
	data := t.TempDir()
	hangingAdminSocket(t, data)
	out := filepath.Join(t.TempDir(), "b.tar.gz")

	code, stdout, stderr := runCLI(t, "admin", "backup", "--data", data, "--out", out, "--timeout", "500ms")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "backup not finished within --timeout 500ms; nothing was written to "+out) ||
		!strings.Contains(stderr, "longer --timeout") {
		t.Fatalf("--timeout: %d %q %q", code, stdout, stderr)
	}
	noArchive(t, out)

	var errb bytes.Buffer
	err := backup(context.Background(), data, out, false, 0, web.BackupTimeouts{Idle: 300 * time.Millisecond}, &errb, &errb)
	sock := filepath.Join(data, "admin.sock")
	if err == nil || !strings.Contains(err.Error(), "the server on "+sock+" sent no progress and no data for 300ms") {
		t.Fatalf("idle timeout: %v", err)
	}
	noArchive(t, out)

	if code, _, stderr := runCLI(t, "admin", "backup", "--data", data, "--out", out, "--timeout", "-1s"); code != 1 || !strings.Contains(stderr, "--timeout -1s: must not be negative") {
		t.Fatalf("negative --timeout: %d %q", code, stderr)
	}
}

func noArchive(t *testing.T, out string) {
	t.Helper()
	for _, p := range []string{out, out + ".partial"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s left behind: %v", p, err)
		}
	}
}
