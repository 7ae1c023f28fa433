package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// assertNotInFiles fails when secret appears in any file under dir.
func assertNotInFiles(t *testing.T, dir, secret string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), secret) {
			t.Fatalf("%s holds the secret in the clear", path)
		}
		return nil
	})
}

func TestTemplateCreateAndRead(t *testing.T) {
	s := startServer(t)
	u := s.signup("Writer")
	c := s.createTemplate(u.token, "Monthly Invoice", invoiceTemplate)
	id, short, slug := c.str("id"), c.str("shortId"), c.str("slug")
	if !strings.HasPrefix(id, "tpl_") || !strings.HasPrefix(short, "etpl_") || slug != "monthly-invoice" || c.get("createdAt") == nil {
		t.Fatalf("create = %s", c.raw)
	}
	for _, ref := range []string{id, short, slug} {
		g := s.must(200, "GET", "/api/templates/"+ref, u.token, nil)
		if g.str("id") != id || g.str("name") != "Monthly Invoice" || g.str("isPublished") != "false" {
			t.Fatalf("get %s = %s", ref, g.raw)
		}
		vars := g.get("variables").([]any)
		if len(vars) != 3 || vars[2].(map[string]any)["defaultValue"] != "Thank you" || vars[0].(map[string]any)["required"] != true {
			t.Fatalf("variables = %v", vars)
		}
		if g.get("schema.sections") == nil {
			t.Fatalf("schema not returned: %s", g.raw)
		}
	}
	// Same name again: ERR_TMPL_011; another name gets its own slug.
	body := map[string]any{}
	for k, v := range invoiceTemplate {
		body[k] = v
	}
	body["name"] = "Monthly Invoice"
	s.wantError(s.do("POST", "/api/templates", u.token, body), 400, "ERR_TMPL_011")
	body["name"] = "Monthly-Invoice!"
	if c2 := s.must(200, "POST", "/api/templates", u.token, body); c2.str("slug") != "monthly-invoice-2" {
		t.Fatalf("second slug = %s", c2.str("slug"))
	}

	list := s.must(200, "GET", "/api/templates", u.token, nil)
	if list.str("meta.total") != "2" {
		t.Fatalf("list = %s", list.raw)
	}

	// Field checks.
	s.wantError(s.do("POST", "/api/templates", u.token, map[string]any{"outputFormats": []string{"pdf"}, "schema": map[string]any{}}), 400, "ERR_VALID_005")
	r := s.do("POST", "/api/templates", u.token, map[string]any{"name": "x", "schema": map[string]any{"sections": []any{}}})
	s.wantError(r, 400, "ERR_VALID_005")
	if r.str("relatedInfo.field") != "outputFormats" {
		t.Fatalf("relatedInfo = %v", r.get("relatedInfo"))
	}
	s.wantError(s.do("POST", "/api/templates", u.token, map[string]any{"name": "x", "outputFormats": []string{"docx"}, "schema": map[string]any{"sections": []any{}}}), 400, "ERR_VALID_003")
	s.wantError(s.do("POST", "/api/templates", u.token, map[string]any{"name": strings.Repeat("n", 256), "outputFormats": []string{"pdf"}, "schema": map[string]any{"sections": []any{}}}), 400, "ERR_VALID_003")
	bad := s.do("POST", "/api/templates", u.token, map[string]any{"name": "bad", "outputFormats": []string{"pdf"},
		"schema": map[string]any{"sections": []any{map[string]any{"id": "s", "components": []any{map[string]any{"type": "hologram"}}}}}})
	s.wantError(bad, 400, "ERR_TMPL_008")
	if !strings.Contains(string(bad.raw), "sections[0].components[0]") {
		t.Fatalf("schema error lacks the path: %s", bad.raw)
	}
	s.wantError(s.do("GET", "/api/templates/tpl_missing", u.token, nil), 404, "ERR_TMPL_001")
}

func TestGenerateAndDownloadPDF(t *testing.T) {
	s := startServer(t)
	u := s.signup("Biller")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)

	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{
		"templateId": tpl.str("shortId"), "format": "pdf", "filename": "invoice-2026-001",
		"variables": map[string]any{"number": "2026-001", "customer": "Grüße, Ωμέγα, Привет"},
		"metadata":  map[string]any{"orderId": 42},
	})
	if g.str("status") != "completed" || !strings.HasPrefix(g.str("jobId"), "job_") || g.str("format") != "pdf" || g.str("templateId") != tpl.str("id") {
		t.Fatalf("generate = %s", g.raw)
	}
	exp, err := time.Parse(time.RFC3339, g.str("expiresAt"))
	if err != nil || exp.Before(time.Now().Add(23*time.Hour)) {
		t.Fatalf("expiresAt %q", g.str("expiresAt"))
	}
	job := s.must(200, "GET", "/api/v1/documents/jobs/"+g.str("jobId"), key, nil)
	if job.str("status") != "completed" || job.str("downloadUrl") != g.str("downloadUrl") || job.get("createdAt") == nil || job.get("completedAt") == nil || job.str("metadata.orderId") != "42" {
		t.Fatalf("job = %s", job.raw)
	}
	// The dashboard JWT reads it too.
	s.must(200, "GET", "/api/v1/documents/jobs/"+g.str("jobId"), u.token, nil)

	status, h, pdf := s.download(g.str("downloadUrl"))
	if status != 200 || h.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(string(pdf), "%PDF-") {
		t.Fatalf("download: %d %s %.20q", status, h.Get("Content-Type"), pdf)
	}
	if cd := h.Get("Content-Disposition"); !strings.Contains(cd, `filename=invoice-2026-001.pdf`) {
		t.Fatalf("Content-Disposition %q", cd)
	}
	text := pdfText(t, pdf)
	for _, want := range []string{"Invoice 2026-001", "Bill to: Grüße, Ωμέγα, Привет", "Note: Thank you"} {
		if !strings.Contains(text, want) {
			t.Fatalf("PDF text lacks %q:\n%s", want, text)
		}
	}

	// Tampered, unsigned and expired links get 403.
	url := g.str("downloadUrl")
	s.wantDownloadDenied(url[:len(url)-1] + flip(url[len(url)-1]))
	s.wantDownloadDenied(strings.Split(url, "?")[0])
	s.wantDownloadDenied(strings.Replace(url, "expires=", "expires=9", 1))
	key2, err := os.ReadFile(filepath.Join(s.Config.Data, "keys", "download.key"))
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute).Unix()
	mac := hmac.New(sha256.New, key2)
	fmt.Fprintf(mac, "%s.%d", g.str("jobId"), past)
	expired := fmt.Sprintf("%s/api/v1/documents/jobs/%s/download?expires=%d&signature=%s", s.URL(), g.str("jobId"), past, hex.EncodeToString(mac.Sum(nil)))
	s.wantDownloadDenied(expired)
	// The same signing with a future expiry is accepted: the expiry, not the form, was refused.
	future := time.Now().Add(time.Hour).Unix()
	mac = hmac.New(sha256.New, key2)
	fmt.Fprintf(mac, "%s.%d", g.str("jobId"), future)
	if st, _, _ := s.download(fmt.Sprintf("%s/api/v1/documents/jobs/%s/download?expires=%d&signature=%s", s.URL(), g.str("jobId"), future, hex.EncodeToString(mac.Sum(nil)))); st != 200 {
		t.Fatalf("freshly signed link: %d", st)
	}

	// Stats count the document.
	keys := s.must(200, "GET", "/api/api-keys", u.token, nil).get("data").([]any)
	kid := keys[0].(map[string]any)["id"].(string)
	if st := s.must(200, "GET", "/api/api-keys/"+kid+"/stats", u.token, nil); st.str("documentsGenerated") != "1" {
		t.Fatalf("stats after one document: %s", st.raw)
	}

	// Async answers at once with pending, and the job completes.
	a := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, map[string]any{"templateId": tpl.str("slug"), "format": "pdf",
		"variables": map[string]any{"number": "2", "customer": "Async Ltd"}})
	if a.str("status") != "pending" || a.get("downloadUrl") != nil {
		t.Fatalf("async = %s", a.raw)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		j := s.must(200, "GET", "/api/v1/documents/jobs/"+a.str("jobId"), key, nil)
		if j.str("status") == "completed" {
			_, _, pdf := s.download(j.str("downloadUrl"))
			if !strings.Contains(pdfText(t, pdf), "Async Ltd") {
				t.Fatal("async PDF lacks its variable")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("async job did not complete: %s", j.raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
	list := s.must(200, "GET", "/api/v1/documents/jobs?limit=1", key, nil)
	if list.str("meta.total") != "2" || len(list.get("data").([]any)) != 1 {
		t.Fatalf("job list = %s", list.raw)
	}
	// The queued job counts on its key too (FinishJob's path).
	if st := s.must(200, "GET", "/api/api-keys/"+kid+"/stats", u.token, nil); st.str("documentsGenerated") != "2" {
		t.Fatalf("stats after the async document: %s", st.raw)
	}
}

func flip(c byte) string {
	if c == '0' {
		return "1"
	}
	return "0"
}

func (s *testServer) wantDownloadDenied(url string) {
	s.t.Helper()
	r := s.do("GET", url, "", nil)
	s.wantError(r, 403, "ERR_JOB_003")
}

func TestGenerateErrors(t *testing.T) {
	s := startServer(t)
	u := s.signup("Errs")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	gen := "/api/v1/documents/generate"

	s.wantError(s.do("POST", gen, key, `{"templateId": "x", `), 400, "ERR_VALID_001")
	s.wantError(s.do("POST", gen, key, `[1,2]`), 400, "ERR_VALID_001")
	s.wantError(s.do("POST", gen, key, ``), 400, "ERR_VALID_001")
	r := s.do("POST", gen, key, map[string]any{"format": "pdf"})
	s.wantError(r, 400, "ERR_VALID_005")
	if r.str("relatedInfo.field") != "templateId" || r.str("path") != gen {
		t.Fatalf("missing templateId: %s", r.raw)
	}
	r = s.do("POST", gen, key, map[string]any{"templateId": tpl.str("id")})
	s.wantError(r, 400, "ERR_VALID_005")
	if r.str("relatedInfo.field") != "format" {
		t.Fatalf("missing format: %s", r.raw)
	}
	s.wantError(s.do("POST", gen, key, map[string]any{"templateId": tpl.str("id"), "format": "docx"}), 400, "ERR_VALID_003")
	s.wantError(s.do("POST", gen, key, map[string]any{"templateId": tpl.str("id"), "format": "xlsx", "variables": map[string]any{"number": "1", "customer": "c"}}), 400, "ERR_JOB_002")
	s.wantError(s.do("POST", gen, key, map[string]any{"templateId": "nope", "format": "pdf"}), 404, "ERR_TMPL_001")
	s.wantError(s.do("POST", gen, key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": "oops"}), 400, "ERR_VALID_003")

	r = s.do("POST", gen, key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": map[string]any{"not": "a string"}}})
	s.wantError(r, 400, "ERR_VALID_002")
	errs, _ := r.get("relatedInfo.errors").([]any)
	text := fmt.Sprint(errs)
	if len(errs) != 2 || !strings.Contains(text, "customer") || !strings.Contains(text, "number") {
		t.Fatalf("variable errors should name number (wrong type) and customer (missing): %s", r.raw)
	}
	// Nothing was recorded for refused requests.
	if l := s.must(200, "GET", "/api/v1/documents/jobs", key, nil); l.str("meta.total") != "0" {
		t.Fatalf("refused requests left jobs: %s", l.raw)
	}
	s.wantError(s.do("GET", "/api/v1/documents/jobs/job_nope", key, nil), 404, "ERR_JOB_001")
	s.wantError(s.do("GET", "/api/v1/documents/jobs?status=done", key, nil), 400, "ERR_VALID_003")
}

func TestRoutingErrors(t *testing.T) {
	s := startServer(t)
	s.wantError(s.do("GET", "/api/nothing-here", "", nil), 404, "ERR_ROUTE_001")
	s.wantError(s.do("GET", "/nothing-here", "", nil), 404, "ERR_ROUTE_001") // "/" is the dashboard
	r := s.do("DELETE", "/api/auth/login", "", nil)
	s.wantError(r, 404, "ERR_ROUTE_002")
	if !strings.Contains(r.header.Get("Allow"), "POST") {
		t.Fatalf("Allow = %q", r.header.Get("Allow"))
	}
	s.wantError(s.do("PUT", "/api/v1/documents/generate", "", nil), 404, "ERR_ROUTE_002")
	if r.header.Get("X-Request-Id") == "" {
		t.Fatal("no X-Request-Id")
	}
}

func TestTenantIsolation(t *testing.T) {
	s := startServer(t)
	a, b := s.signup("TeamA"), s.signup("TeamB")
	keyA, keyB := s.createKey(a.token, nil), s.createKey(b.token, nil)
	tpl := s.createTemplate(a.token, "Secret Invoice", invoiceTemplate)
	job := s.must(200, "POST", "/api/v1/documents/generate", keyA, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"variables": map[string]any{"number": "A-1", "customer": "Alpha"}})

	for _, ref := range []string{tpl.str("id"), tpl.str("shortId"), tpl.str("slug")} {
		s.wantError(s.do("GET", "/api/templates/"+ref, b.token, nil), 404, "ERR_TMPL_001")
		s.wantError(s.do("GET", "/api/v1/templates/"+ref, keyB, nil), 404, "ERR_TMPL_001")
		s.wantError(s.do("POST", "/api/v1/documents/generate", keyB, map[string]any{"templateId": ref, "format": "pdf",
			"variables": map[string]any{"number": "B", "customer": "Bravo"}}), 404, "ERR_TMPL_001")
	}
	s.wantError(s.do("GET", "/api/v1/documents/jobs/"+job.str("jobId"), keyB, nil), 404, "ERR_JOB_001")
	s.wantError(s.do("GET", "/api/v1/documents/jobs/"+job.str("jobId"), b.token, nil), 404, "ERR_JOB_001")
	if l := s.must(200, "GET", "/api/v1/documents/jobs", keyB, nil); l.str("meta.total") != "0" {
		t.Fatalf("B sees A's jobs: %s", l.raw)
	}
	if l := s.must(200, "GET", "/api/templates", b.token, nil); l.str("meta.total") != "0" {
		t.Fatalf("B sees A's templates: %s", l.raw)
	}
	// B naming A's team gets nothing.
	me := s.must(200, "GET", "/api/v1/documents/jobs/"+job.str("jobId"), a.token, nil)
	_ = me
	teamA := s.must(200, "GET", "/api/api-keys", a.token, nil).get("data").([]any)[0].(map[string]any)["teamId"].(string)
	s.wantError(s.do("GET", "/api/templates/"+tpl.str("id"), b.token, nil, "X-Team-Id", teamA), 404, "ERR_TEAM_001")
	s.wantError(s.do("GET", "/api/v1/documents/jobs", b.token, nil, "X-Team-Id", teamA), 404, "ERR_TEAM_001")
}

// TestGenerateBodyShapes: a generate request is read the same whatever the
// shape of its body — the usual one (read in one pass), names in another
// case, duplicate members, members the one pass leaves to encoding/json,
// a body of unknown length (chunked) — and bad bodies get the same errors.
func TestGenerateBodyShapes(t *testing.T) {
	s := startServer(t)
	u := s.signup("Shapes")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	id := tpl.str("id")
	gen := "/api/v1/documents/generate"
	check := func(r resp, customer, filename, orderID string) {
		t.Helper()
		if r.status != 200 || r.str("status") != "completed" {
			t.Fatalf("generate: %d %s", r.status, r.raw)
		}
		job := s.must(200, "GET", "/api/v1/documents/jobs/"+r.str("jobId"), key, nil)
		if job.str("metadata.orderId") != orderID {
			t.Fatalf("metadata: %s", job.raw)
		}
		_, h, pdf := s.download(r.str("downloadUrl"))
		if cd := h.Get("Content-Disposition"); !strings.Contains(cd, filename) {
			t.Fatalf("Content-Disposition %q, want %s", cd, filename)
		}
		if text := pdfText(t, pdf); !strings.Contains(text, "Bill to: "+customer) || !strings.Contains(text, "Note: Thank you") {
			t.Fatalf("PDF text lacks %q:\n%s", customer, text)
		}
	}
	// The usual shape, white space and escapes included.
	check(s.do("POST", gen, key, ` { "templateId" : "`+id+`" , "format":"pdf", "filename":"caf\u00e9 1",
		"variables" : {"number":"1","customer":"Gr\u00fc\u00dfe \"A\""} , "metadata":{"orderId":"7"}, "locale":"de-DE" } `), `Grüße "A"`, "filename*=UTF-8''caf%C3%A9%201", "7")
	// Names in another case, and a duplicate (the last one counts), as encoding/json reads them.
	check(s.do("POST", gen, key, `{"TemplateID":"`+id+`","FORMAT":"pdf","Variables":{"number":"2","customer":"Case Ltd"}}`), "Case Ltd", "attachment", "")
	check(s.do("POST", gen, key, `{"templateId":"`+id+`","format":"xlsx","format":"pdf","variables":{"number":"3","customer":"First"},"variables":{"number":"3","customer":"Last"}}`),
		"Last", "attachment", "")
	// A member the one pass does not read (a PDF option).
	check(s.do("POST", gen, key, `{"templateId":"`+id+`","format":"pdf","documentMetadata":{"title":"T"},"variables":{"number":"4","customer":"Options"}}`),
		"Options", "attachment", "")
	// A body of unknown length.
	req, err := http.NewRequest("POST", s.URL()+gen, io.MultiReader(strings.NewReader(`{"templateId":"`+id+`","format":"pdf",`),
		strings.NewReader(`"variables":{"number":"5","customer":"Chunked"}}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("%d %s", res.StatusCode, raw)
	}
	check(resp{status: res.StatusCode, raw: raw, body: body}, "Chunked", "attachment", "")

	// Bad bodies: the errors of before.
	s.wantError(s.do("POST", gen, key, `{"templateId":"`+id+`","format":"pdf","variables":{"number":"6","customer":"c"}} x`), 400, "ERR_VALID_001")
	s.wantError(s.do("POST", gen, key, `{"templateId":"`+id+`","format":"pdf","variables":{"number":"6","customer":"c",}}`), 400, "ERR_VALID_001")
	r := s.do("POST", gen, key, `{"templateId":"`+id+`","format":1}`)
	s.wantError(r, 400, "ERR_VALID_003")
	if r.str("relatedInfo.field") != "format" {
		t.Fatalf("wrong type: %s", r.raw)
	}
	s.wantError(s.do("POST", gen, key, `{"templateId":"`+id+`","format":"pdf","variables":{"number":"6","customer":"c"},"metadata":[1]}`), 400, "ERR_VALID_003")
	s.wantError(s.do("POST", gen, key, `{"templateId":"`+id+`","format":"pdf","variables":null}`), 400, "ERR_VALID_002") // no variables: the required ones are missing
	s.wantError(s.do("POST", gen, key, strings.Repeat(" ", 10<<20+1)), 400, "ERR_LIMIT_010")
	if l := s.must(200, "GET", "/api/v1/documents/jobs", key, nil); l.str("meta.total") != "5" {
		t.Fatalf("jobs after the refused requests: %s", l.raw)
	}
}
