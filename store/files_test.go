package store

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileFailingPartWayLeavesNoFile(t *testing.T) {
	f := &Files{Root: t.TempDir()}
	full := strings.Repeat("whole document ", 1000)
	if n, err := f.WriteFile("team_1/job_1.pdf", func(w io.Writer) error { _, err := io.WriteString(w, full); return err }); err != nil || n != int64(len(full)) {
		t.Fatalf("write: %d %v", n, err)
	}
	// A write that fails after some bytes: an error, no new file, and the
	// earlier file under that name is untouched.
	boom := errors.New("render died")
	half := func(w io.Writer) error {
		if _, err := io.WriteString(w, "half a doc"); err != nil {
			return err
		}
		return boom
	}
	if _, err := f.WriteFile("team_1/job_2.pdf", half); !errors.Is(err, boom) {
		t.Fatalf("failed write returned %v", err)
	}
	if _, err := f.WriteFile("team_1/job_1.pdf", half); !errors.Is(err, boom) {
		t.Fatalf("failed overwrite returned %v", err)
	}
	entries, err := os.ReadDir(filepath.Join(f.Root, "team_1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "job_1.pdf" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("files after failed writes: %v, want only job_1.pdf", names)
	}
	if b, _ := os.ReadFile(filepath.Join(f.Root, "team_1", "job_1.pdf")); string(b) != full {
		t.Fatalf("earlier file changed: %d bytes", len(b))
	}
}

func TestRemoveTempFiles(t *testing.T) {
	root := filepath.Join(t.TempDir(), "files")
	f := &Files{Root: root}
	if n, err := f.RemoveTempFiles(); err != nil || n != 0 {
		t.Fatalf("before any write: %d %v", n, err)
	}
	if _, err := f.WriteFile("team_1/job_1.pdf", func(w io.Writer) error { _, err := io.WriteString(w, "%PDF-"); return err }); err != nil {
		t.Fatal(err)
	}
	// What kill -9 during writes leaves: temp files beside finished ones.
	for _, p := range []string{"team_1/.tmp-123", "team_2/.tmp-456", "avatars/.tmp-789"} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o750)
		if err := os.WriteFile(filepath.Join(root, p), []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := f.RemoveTempFiles(); err != nil || n != 3 {
		t.Fatalf("removed %d temp files (%v), want 3", n, err)
	}
	left, _ := filepath.Glob(filepath.Join(root, "*", "*"))
	if len(left) != 1 || filepath.Base(left[0]) != "job_1.pdf" {
		t.Fatalf("left behind: %v", left)
	}
}
