//go:build unix

package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// withUmask sets the process umask for the test and restores it after. The
// umask is process-wide: tests that use it must not run in parallel.
func withUmask(t *testing.T, mask int) {
	t.Helper()
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// TestPermDataDirIsPrivate: the data directory holds password hashes, TOTP
// and webhook secrets, signing keys and every team's documents. Whatever
// the umask (0022 here, the usual default) and whatever the mode of a data
// directory that already existed (0755 here), every file Folio writes in it
// is 0600 and every directory 0700, and so is a backup archive and every
// entry in it. The server is booted as `folio serve` boots it, minus the
// umask it sets (restrictUmask), so the explicit modes are what is tested.
func TestPermDataDirIsPrivate(t *testing.T) {
	withUmask(t, 0o022)
	data := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(data, 0o755); err != nil {
		t.Fatal(err)
	}
	s := startServerIn(t, data, func(c *Config) { c.InlineMax = -1 }) // the document as a file, to check its mode

	// Mail (signup writes a verification .eml), a verified user, a TOTP
	// secret, a webhook secret, an avatar, a generated document.
	u := s.verifiedUser("Perm")
	if len(s.mails(u.email)) == 0 {
		t.Fatal("signup wrote no mail")
	}
	s.must(200, "POST", "/api/users/me/2fa/enable", u.token, nil)
	key := s.createKey(u.token, nil)
	s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": "https://93.184.215.14/hook", "events": []string{"document.generated"}})
	s.must(200, "POST", "/api/users/me/avatar", u.token, map[string]any{"imageData": base64.StdEncoding.EncodeToString(encodePNG(t, 8, 8))})
	s.must(200, "POST", "/api/assets", u.token, map[string]any{"name": "logo", "contentBase64": base64.StdEncoding.EncodeToString(encodePNG(t, 8, 8))})
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}})

	// A backup through the running server (its admin socket), with the
	// documents.
	out := filepath.Join(t.TempDir(), "backup.tar.gz")
	if code, stdout, stderr := runCLI(t, "admin", "backup", "--data", data, "--out", out, "--with-files"); code != 0 || !strings.Contains(stdout, "running server") {
		t.Fatalf("backup: %d %q %q", code, stdout, stderr)
	}
	checkPrivateTree(t, data, "folio.db", "folio.db-wal", "folio.db-shm", "queue.db", "keys/jwt.key", "keys/download.key",
		"tls/key.pem", "tls/cert.pem", "mail", "files", "files/avatars/"+u.id+".png", "files/assets", "admin.sock")
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("backup archive %s: %v, want mode 0600", fi.Mode(), err)
	}
	entries := backupModes(t, out)
	for _, want := range []string{"folio.db", "queue.db", "keys/jwt.key", "tls/key.pem"} {
		if _, ok := entries[want]; !ok {
			t.Errorf("backup lacks %s: %v", want, entries)
		}
	}
	var pdfs int
	for name, mode := range entries {
		if mode != 0o600 {
			t.Errorf("backup entry %s has mode %o, want 0600 (restored as such)", name, mode)
		}
		if strings.HasSuffix(name, ".pdf") {
			pdfs++
		}
	}
	if pdfs == 0 {
		t.Errorf("backup --with-files holds no document: %v", entries)
	}

	// After a clean stop, and once more after a restart, nothing has
	// widened (SQLite removes and recreates its -wal and -shm files).
	s.Close()
	checkPrivateTree(t, data, "folio.db", "queue.db")
	s2 := startServerIn(t, data)
	s2.signup("Again") // a write, and another mail
	checkPrivateTree(t, data, "folio.db", "folio.db-wal", "folio.db-shm")
}

// TestPermServeUmask: `folio serve` (a child process here) also sets its
// umask to 0077, so a file some code path creates without an explicit mode
// is private too. Read from /proc (Linux).
func TestPermServeUmask(t *testing.T) {
	withUmask(t, 0o022) // inherited by the child
	data := t.TempDir()
	p := startProc(t, data, freeAddr(t), "serve.log")
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc to read the umask from: %v", err)
	}
	m := regexp.MustCompile(`(?m)^Umask:\s*(\d+)$`).FindSubmatch(status)
	if m == nil {
		t.Skip("this kernel does not show the umask in /proc/<pid>/status")
	}
	if got := string(m[1]); got != "0077" {
		t.Fatalf("folio serve runs with umask %s, want 0077", got)
	}
	checkPrivateTree(t, data, "folio.db", "queue.db", "tls/cert.pem")
}

// checkPrivateTree walks dir and fails on any directory that is not 0700
// and anything else (files, the admin socket) that is not 0600. No file in
// the data directory is public: even the self-signed certificate, which
// holds nothing secret, stays private, as nothing but the server reads it.
// mustExist names paths (relative to dir) that must have been found, so a
// test that writes nothing cannot pass.
func checkPrivateTree(t *testing.T, dir string, mustExist ...string) {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		seen[filepath.ToSlash(rel)] = true
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o (%s), want %o", rel, got, fi.Mode(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range mustExist {
		if !seen[p] {
			t.Errorf("%s not found in the data directory", p)
		}
	}
}

// backupModes lists the entries of a backup archive with their modes.
func backupModes(t *testing.T, path string) map[string]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]int64{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = h.Mode
	}
}
