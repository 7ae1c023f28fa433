package main

import (
	"bytes"
	"strings"
	"testing"

	"folio/internal/pgtest"
	"folio/internal/s3test"
)

// TestMigrateEmbeddedToCluster moves a real embedded install into
// PostgreSQL and S3 with folio admin migrate, then serves it with
// --database-url and --files-url: the same login, access token, API key,
// templates, asset and documents (one in the database, one a file that
// moved into the bucket), read back byte for byte, and new work on the
// migrated template.
func TestMigrateEmbeddedToCluster(t *testing.T) {
	srv := s3test.Shared(t)
	s3test.Env(t)
	dbURL := pgtest.NewDatabase(t)
	filesURL := srv.URL(srv.NewBucket(t), "folio")

	// The embedded install, used through the API.
	data := t.TempDir()
	s := startServerIn(t, data)
	a := s.signup("Ada")
	key := s.createKey(a.token, nil)
	noise := noisePNG(t, 200, 200, 3)
	up := s.uploadAsset("POST", "/api/assets", a.token, "noise.png", noise, "")
	if up.status != 200 {
		t.Fatalf("upload asset: %d %s", up.status, up.raw)
	}
	bigTpl := s.createTemplate(a.token, "Noise Report", bigTemplate("asset:noise.png"))
	big := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": bigTpl.str("id"), "format": "pdf", "variables": map[string]any{"title": "Moved noise"}})
	inv := s.createTemplate(a.token, "Invoice", invoiceTemplate)
	small := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": inv.str("id"), "format": "pdf", "variables": map[string]any{"number": "7", "customer": "ACME"}})
	var before [2][]byte
	for i, g := range []resp{big, small} {
		st, _, b := s.download(g.str("downloadUrl"))
		if st != 200 || g.str("status") != "completed" {
			t.Fatalf("embedded download %d: %d %s", i, st, g.raw)
		}
		before[i] = b
	}
	if len(before[0]) <= 64<<10 || len(before[1]) > 64<<10 {
		t.Fatalf("document sizes %d and %d: want one file and one kept in SQLite", len(before[0]), len(before[1]))
	}
	oldURL := s.URL()
	s.Main.Close()

	// The copy; a second run finds it complete and copies nothing.
	for run := range 2 {
		code, out, errOut := runCLI(t, "admin", "migrate", "--data", data, "--to-database-url", dbURL, "--to-files-url", filesURL)
		if code != 0 || !strings.Contains(out, "complete and verified") {
			t.Fatalf("migrate run %d: exit %d\n%s\n%s", run, code, out, errOut)
		}
		if run == 1 {
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) == 5 && f[1] != "from" && f[4] != "0" {
					t.Errorf("second run copied rows: %s", line)
				}
			}
			if !strings.Contains(out, " 0 copied by this run") {
				t.Errorf("second run sent files again:\n%s", out)
			}
		}
	}

	// The cluster: a server on PostgreSQL and S3 with a data directory of
	// its own.
	c := startServer(t, func(cfg *Config) { cfg.DatabaseURL, cfg.FilesURL = dbURL, filesURL })
	// The access token the embedded server signed is still good: the
	// keys moved.
	if me := c.must(200, "GET", "/api/users/me", a.token, nil); me.str("email") != a.email {
		t.Fatalf("me: %s", me.raw)
	}
	c.must(200, "POST", "/api/auth/login", "", map[string]any{"email": a.email, "password": a.password})
	if got := c.must(200, "GET", "/api/templates/"+bigTpl.str("id"), a.token, nil); got.str("name") != "Noise Report" {
		t.Fatalf("template: %s", got.raw)
	}
	if ac := c.must(200, "GET", up.str("contentUrl"), a.token, nil); !bytes.Equal(ac.raw, noise) {
		t.Fatalf("asset content: %d bytes, want the %d uploaded", len(ac.raw), len(noise))
	}
	for i, g := range []resp{big, small} {
		if j := c.must(200, "GET", "/api/v1/documents/jobs/"+g.str("jobId"), key, nil); j.str("status") != "completed" {
			t.Fatalf("job %d: %s", i, j.raw)
		}
		// The link the embedded server signed, on the cluster.
		link := strings.Replace(g.str("downloadUrl"), oldURL, c.URL(), 1)
		st, _, b := c.download(link)
		if st != 200 || !bytes.Equal(b, before[i]) {
			t.Fatalf("document %d on the cluster: %d, %d bytes, want the %d served before", i, st, len(b), len(before[i]))
		}
	}
	// New work on the migrated template, with the migrated key.
	g := c.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": inv.str("id"), "format": "pdf", "variables": map[string]any{"number": "8", "customer": "Cluster Co"}})
	st, _, b := c.download(g.str("downloadUrl"))
	if st != 200 || !strings.Contains(pdfText(t, b), "Cluster Co") {
		t.Fatalf("a new document on the cluster: %d %s", st, g.raw)
	}
}
