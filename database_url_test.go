package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"folio/store/postgres"
)

// TestDatabaseURLErrors: folio serve --database-url (or FOLIO_DATABASE_URL)
// with a database that does not answer fails at once, naming the flag and
// the address; a URL that is not postgres:// is refused before anything
// is created. (Serving on PostgreSQL is internal/cluster's to test.)
func TestDatabaseURLErrors(t *testing.T) {
	if m := postgres.Missing(); len(m) > 0 {
		t.Fatalf("the PostgreSQL backend lacks %v", m)
	}
	for _, tc := range []struct {
		name    string
		env     string
		args    []string
		want    []string
		created bool // whether the data directory may exist afterwards
	}{
		{"flag", "", []string{"--database-url", "postgres://folio@127.0.0.1:1/folio"},
			[]string{"--database-url: ", "127.0.0.1:1", "connection refused"}, true},
		{"env", "postgresql://folio@127.0.0.1:1/folio", nil,
			[]string{"--database-url: ", "127.0.0.1:1"}, true},
		{"scheme", "", []string{"--database-url", "mysql://127.0.0.1/folio"},
			[]string{`--database-url: want a postgres:// URL, got scheme "mysql"`}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			if tc.env != "" {
				t.Setenv("FOLIO_DATABASE_URL", tc.env)
			}
			code, _, errOut := runCLI(t, append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0"}, tc.args...)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr %q", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Fatalf("stderr %q lacks %q", errOut, w)
				}
			}
			if _, err := os.Stat(data); !tc.created && !os.IsNotExist(err) {
				t.Fatalf("the data directory was created (%v): the refusal came too late", err)
			}
		})
	}
}
