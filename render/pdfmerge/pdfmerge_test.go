package pdfmerge

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// TestCountTokens: tokens are counted outside streams, strings and
// comments whatever they hold.
func TestCountTokens(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"1 0 obj << /Type /Page /Kids [3 0 R] >> endobj", 14},
		{"(a string (with) stream and \\) endstream) 1", 2},
		{"<48656c6c6f> /Name% a comment 1 2 3\n4", 3},
		{"<< /Length 9 >>\nstream\n1 2 3 4 5\nendstream\nendobj", 6},
		{"[1 2 3]", 5},
		{strings.Repeat("1 ", 1000), 1000},
	}
	for _, c := range cases {
		if got := countTokens([]byte(c.in), 1<<30); got != c.want {
			t.Errorf("countTokens(%q) = %d, want %d", c.in, got, c.want)
		}
	}
	if got := countTokens([]byte(strings.Repeat("1 ", 1000)), 10); got != 11 {
		t.Errorf("with a limit of 10: %d, want 11 (it stops past the limit)", got)
	}
}

// TestObjectStreamObjectsAreParsed: objects packed in an object stream
// that pdfcpu's validation does not reach (behind a page's private key)
// are parsed when a file is read (so the active-content check sees them:
// app's TestCheckPDFRefusals), and such a file still merges and combines
// into files qpdf finds clean. (pdfcpu's validation drops the page's
// private key; the objects behind it go with it.)
func TestObjectStreamObjectsAreParsed(t *testing.T) {
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf not installed")
	}
	// objstm-lazy.pdf: page /Foo 5 0 R, 5 = << /Bar 6 0 R >>, 6 = << /X (stream endstream) /Y [1 2] >>,
	// all in one object stream (qpdf --object-streams=generate).
	lazy, err := os.ReadFile(filepath.Join("testdata", "objstm-lazy.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(lazy)
	if err != nil {
		t.Fatal(err)
	}
	for n, e := range a.ctx.Table {
		if _, ok := e.Object.(types.LazyObjectStreamObject); ok {
			t.Errorf("object %d was left unparsed", n)
		}
	}
	merged, err := Merge(trialPage, nil, []*Attachment{a}, nil)
	if err != nil {
		t.Fatal(err)
	}
	combined, err := Combine([]Document{{PDF: lazy, Title: "one"}, {PDF: lazy, Title: "two"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string][]byte{"merged": merged, "combined": combined} {
		path := filepath.Join(t.TempDir(), name+".pdf")
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command("qpdf", "--check", path).CombinedOutput(); err != nil || bytes.Contains(b, []byte("WARNING")) {
			t.Errorf("%s: qpdf --check: %v\n%s", name, err, b)
		}
	}
}
