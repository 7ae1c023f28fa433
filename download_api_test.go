package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// pdfInfo runs poppler's pdfinfo (ISO dates) on a PDF and returns its
// fields by name.
func pdfInfo(t testing.TB, pdf []byte) map[string]string {
	t.Helper()
	if _, err := exec.LookPath("pdfinfo"); err != nil {
		t.Fatalf("pdfinfo is needed (apt-get install poppler-utils): %v", err)
	}
	cmd := exec.Command("pdfinfo", "-isodates", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdfinfo: %v", err)
	}
	info := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			info[k] = strings.TrimSpace(v)
		}
	}
	return info
}

// TestDownloadNamesAndProperties: a download is named by the request's
// filename (UTF-8 kept with RFC 6266 filename*), else by the template's
// name and the day; the PDF's Title is the template's name, its Author the
// team's, its CreationDate the job's; the schema's metadata wins, and a
// fixed creationDate makes it reproducible.
func TestDownloadNamesAndProperties(t *testing.T) {
	s := startServer(t)
	u := s.signup("Namer")
	team := s.must(200, "POST", "/api/teams", u.token, map[string]any{"name": "Acme Billing"}).str("id")
	key := s.must(200, "POST", "/api/api-keys", u.token, map[string]any{"name": "k"}, "X-Team-Id", team).str("plainKey")
	tpl := map[string]any{}
	for k, v := range invoiceTemplate {
		tpl[k] = v
	}
	tpl["name"], tpl["outputFormats"] = "Quarterly Report", []string{"pdf", "xlsx"}
	s.must(200, "POST", "/api/templates", u.token, tpl, "X-Team-Id", team)
	vars := map[string]any{"number": "7", "customer": "ACME"}

	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": "quarterly-report", "format": "pdf", "variables": vars})
	created, err := time.Parse(time.RFC3339Nano, g.str("createdAt"))
	if err != nil {
		j := s.must(200, "GET", "/api/v1/documents/jobs/"+g.str("jobId"), key, nil)
		if created, err = time.Parse(time.RFC3339Nano, j.str("createdAt")); err != nil {
			t.Fatalf("job createdAt: %s", j.raw)
		}
	}
	_, h, pdf := s.download(g.str("downloadUrl"))
	want := `attachment; filename="Quarterly Report ` + created.UTC().Format("2006-01-02") + `.pdf"`
	if cd := h.Get("Content-Disposition"); cd != want {
		t.Errorf("Content-Disposition %q, want %q", cd, want)
	}
	info := pdfInfo(t, pdf)
	if info["Title"] != "Quarterly Report" || info["Author"] != "Acme Billing" {
		t.Errorf("Title %q, Author %q; want the template's and the team's names", info["Title"], info["Author"])
	}
	when, err := time.Parse(time.RFC3339, info["CreationDate"])
	if err != nil || when.Sub(created).Abs() > 2*time.Second {
		t.Errorf("CreationDate %q, want the job's time %s", info["CreationDate"], created)
	}

	g = s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": "quarterly-report", "format": "xlsx", "variables": vars, "filename": "Rechnung Müller"})
	_, h, xlsx := s.download(g.str("downloadUrl"))
	want = `attachment; filename="Rechnung M_ller.xlsx"; filename*=UTF-8''Rechnung%20M%C3%BCller.xlsx`
	if cd := h.Get("Content-Disposition"); cd != want {
		t.Errorf("Content-Disposition %q, want %q", cd, want)
	}
	f, err := excelize.OpenReader(bytes.NewReader(xlsx))
	if err != nil {
		t.Fatal(err)
	}
	props, err := f.GetDocProps()
	f.Close()
	if err != nil || props.Title != "Quarterly Report" || props.Creator != "Acme Billing" || !strings.HasPrefix(props.Created, created.UTC().Format("2006-01-02")) {
		t.Errorf("workbook properties %+v (%v)", props, err)
	}

	// The schema's metadata: a title with placeholders, a fixed date.
	tpl["name"] = "Fixed"
	tpl["schema"] = map[string]any{"pageSize": "A4", "metadata": map[string]any{"title": "Invoice {{ number }}", "subject": "Invoices", "keywords": "invoice, ACME", "language": "en", "creationDate": "2026-01-01"},
		"sections": invoiceTemplate["schema"].(map[string]any)["sections"]}
	s.must(200, "POST", "/api/templates", u.token, tpl, "X-Team-Id", team)
	var files [][]byte
	for range 2 {
		g = s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": "fixed", "format": "pdf", "variables": vars})
		_, _, pdf = s.download(g.str("downloadUrl"))
		files = append(files, pdf)
		time.Sleep(1100 * time.Millisecond)
	}
	info = pdfInfo(t, files[0])
	if info["Title"] != "Invoice 7" || info["Subject"] != "Invoices" || info["Keywords"] != "invoice, ACME" || !strings.HasPrefix(info["CreationDate"], "2026-01-01T00:00:00") {
		t.Errorf("metadata: Title %q, Subject %q, Keywords %q, CreationDate %q", info["Title"], info["Subject"], info["Keywords"], info["CreationDate"])
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("with a fixed creationDate, two renders a second apart differ")
	}
}
