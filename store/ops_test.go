package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	if err := CheckWritable(dir); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("probe files left behind: %v", left)
	}
	// A path that is a file, or gone: what a vanished mount looks like. (A
	// read-only mount is tested end to end in ops_test.go.)
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o600)
	for _, bad := range []string{file, filepath.Join(dir, "missing")} {
		if err := CheckWritable(bad); err == nil || !strings.Contains(err.Error(), "not writable") {
			t.Fatalf("CheckWritable(%s) = %v", bad, err)
		}
	}
}

func TestCheckFreeSpace(t *testing.T) {
	dir := t.TempDir()
	free, err := FreeSpace(dir)
	if err != nil || free == 0 {
		t.Fatalf("FreeSpace = %d, %v", free, err)
	}
	if err := CheckFreeSpace(dir, 1); err != nil {
		t.Fatal(err)
	}
	if err := CheckFreeSpace(dir, free*2); err == nil || !strings.Contains(err.Error(), "MB free") {
		t.Fatalf("CheckFreeSpace with too little room = %v", err)
	}
}
