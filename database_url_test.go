package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"folio/store/postgres"
)

// TestDatabaseURLRefusedUntilComplete: folio serve --database-url (or
// FOLIO_DATABASE_URL) fails at once, before creating anything, naming what
// the PostgreSQL backend does not provide yet; a URL that is not
// postgres:// is refused as such.
func TestDatabaseURLRefusedUntilComplete(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	for _, tc := range []struct {
		name string
		env  string
		args []string
		want []string
	}{
		{"flag", "", []string{"serve", "--data", data, "--addr", "127.0.0.1:0", "--database-url", "postgres://folio@127.0.0.1:1/folio"},
			append([]string{"PostgreSQL backend is not complete yet", "docs/deploy.md", "not implemented: " + strings.Join(postgres.Missing(), "; ")}, postgres.Missing()...)},
		{"env", "postgresql://folio@127.0.0.1:1/folio", []string{"serve", "--data", data, "--addr", "127.0.0.1:0"},
			append([]string{"not implemented: "}, postgres.Missing()...)},
		{"scheme", "", []string{"serve", "--data", data, "--addr", "127.0.0.1:0", "--database-url", "mysql://127.0.0.1/folio"},
			[]string{`--database-url: want a postgres:// URL, got scheme "mysql"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("FOLIO_DATABASE_URL", tc.env)
			}
			code, _, errOut := runCLI(t, tc.args...)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr %q", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Fatalf("stderr %q lacks %q", errOut, w)
				}
			}
			for _, p := range postgres.Parts() {
				if p.Done && strings.Contains(errOut, " "+p.Name+";") {
					t.Fatalf("stderr %q lists %s, which is implemented", errOut, p.Name)
				}
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Fatalf("the data directory was created (%v): the refusal came too late", err)
			}
		})
	}
}
