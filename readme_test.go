package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// readmeMarker precedes every README block a newcomer pastes in order.
const readmeMarker = "<!-- readme-test -->"

// readmeBlocks returns the ```sh blocks of a Markdown text that follow the
// marker line, in order.
func readmeBlocks(t testing.TB, md string) []string {
	t.Helper()
	var blocks []string
	var cur *strings.Builder
	marked := false
	sc := bufio.NewScanner(strings.NewReader(md))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		case strings.TrimSpace(line) == readmeMarker:
			marked = true
		case marked && strings.TrimSpace(line) == "":
		case marked && strings.TrimSpace(line) == "```sh":
			cur, marked = &strings.Builder{}, false
		case marked:
			t.Fatalf("README line %d: %s must be followed by a ```sh block, not %q", n, readmeMarker, line)
		}
	}
	if cur != nil {
		t.Fatal("README: unterminated ```sh block")
	}
	return blocks
}

// TestREADME runs the README's quick start as a newcomer would: every
// marked block, in order, in one bash with curl and jq, in an empty
// directory holding only the repository's testdata. The blocks build the
// binary and start it themselves. Only the address changes (8443 may be
// taken here), and the build points at this repository. Every call in the
// README fails loudly (curl --fail-with-body, jq -e), and the script runs
// under set -e: a path or field the README names that the server no longer
// has fails the test.
func TestREADME(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (.ci/run installs it)", tool)
		}
	}
	md, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlocks(t, string(md))
	if len(blocks) < 4 {
		t.Fatalf("README has %d blocks marked %s, want the quick start, the examples, the team and the operator commands", len(blocks), readmeMarker)
	}
	script := strings.Join(blocks, "\n")

	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(repo, "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	for _, sub := range []struct{ old, new string }{
		{"go build -o folio .", "go build -C '" + repo + "' -o \"$PWD/folio\" ."},
		{"127.0.0.1:8443", addr},
	} {
		if !strings.Contains(script, sub.old) {
			t.Fatalf("README no longer says %q; update the test's substitutions", sub.old)
		}
		script = strings.ReplaceAll(script, sub.old, sub.new)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -xeo pipefail\n"+script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FOLIO_ADDR="+addr)
	// bash and the server it starts in the background share a process
	// group, stopped together.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A file, not a pipe: the server outlives bash and keeps it open.
	log, err := os.Create(filepath.Join(t.TempDir(), "output"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	output := func() string { b, _ := os.ReadFile(log.Name()); return string(b) }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopGroup(cmd.Process.Pid) })
	if err := cmd.Wait(); err != nil {
		t.Fatalf("README blocks failed: %v\n%s", err, output())
	}
	if testing.Verbose() {
		t.Logf("output:\n%s", output())
	}

	for file, want := range map[string][]string{
		"invoice.pdf":         {"Invoice 2026-001", "Bill to: ACME"},
		"example-invoice.pdf": {"Invoice INV-2026-0042", "Ωμέγα Trading Ltd."},
	} {
		pdf, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		text := pdfText(t, pdf)
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s lacks %q:\n%s", file, w, text)
			}
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "folio-backup.tar.gz")); err != nil || st.Size() == 0 {
		t.Errorf("the operator block's backup: %v", err)
	}
	for file, sheet := range map[string]string{"example-invoice.xlsx": "Invoice", "example-monthly-report.xlsx": "Summary"} {
		f, err := excelize.OpenFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if idx, err := f.GetSheetIndex(sheet); err != nil || idx < 0 {
			t.Errorf("%s: no sheet %q in %v", file, sheet, f.GetSheetList())
		}
		f.Close()
	}
}

// stopGroup stops the process group pgid and waits up to 10 s for it to end.
func stopGroup(pgid int) {
	syscall.Kill(-pgid, syscall.SIGTERM)
	for range 100 {
		if syscall.Kill(-pgid, 0) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
}
