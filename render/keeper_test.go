package render

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// keeper records how Render delivered a document.
type keeper struct {
	bytes.Buffer
	kept  []byte
	keeps int
}

func (k *keeper) Keep(b []byte) { k.kept = b; k.keeps++ }

// A writer that is a Keeper gets a PDF's bytes handed over once, and no
// Write; other formats are written to it.
func TestRenderHandsPDFToKeeper(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"Kept {{ n }}"}}]}]}`))
	values, err := tpl.Values(map[string]any{"n": "42"})
	if err != nil {
		t.Fatal(err)
	}
	var k keeper
	st, err := tpl.Render(context.Background(), &k, PDF, values, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if k.keeps != 1 || k.Len() != 0 {
		t.Fatalf("Keep called %d times and %d bytes written, want Keep once and no Write", k.keeps, k.Len())
	}
	if st.Bytes != int64(len(k.kept)) {
		t.Errorf("stats.Bytes = %d, kept %d bytes", st.Bytes, len(k.kept))
	}
	if got := strings.TrimSpace(ExtractText(t, k.kept)); got != "Kept 42" {
		t.Errorf("the kept PDF reads %q, want %q", got, "Kept 42")
	}

	var x keeper
	if _, err := tpl.Render(context.Background(), &x, XLSX, values, Options{}); err != nil {
		t.Fatal(err)
	}
	if x.keeps != 0 || !bytes.HasPrefix(x.Bytes(), []byte("PK")) {
		t.Errorf("XLSX: Keep called %d times, %d bytes written (want a written workbook)", x.keeps, x.Len())
	}
}
