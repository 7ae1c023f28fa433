package main

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
)

// FuzzImportMultipart posts arbitrary multipart bodies (the boundary is
// fixed; everything after the headers is fuzzed) to the real import endpoint:
// the server must answer a success or an error envelope, never a 5xx.
func FuzzImportMultipart(f *testing.F) {
	s := startServer(f)
	u := s.signup("Importer")
	valid := func(file, mode string) []byte {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		w.SetBoundary("folio-fuzz-boundary")
		if mode != "" {
			w.WriteField("duplicateHandling", mode)
		}
		fw, _ := w.CreateFormFile("file", "t.json")
		fw.Write([]byte(file))
		w.Close()
		return b.Bytes()
	}
	f.Add(valid(`{"format":"folio-template","formatVersion":1,"template":{"name":"A","outputFormats":["pdf"],"schema":{"sections":[]}}}`, "rename"))
	f.Add(valid(`{"template":{"name":"B","outputFormats":["xlsx"],"schema":{"sections":[{"id":"s","components":[{"type":"text","props":{"content":"{{x}}"}}]}]}}}`, "overwrite"))
	f.Add(valid(`not json`, "skip"))
	f.Add(valid(`{"template":{"name":`+strings.Repeat(`"x`, 50)+`}}`, ""))
	f.Add([]byte("--folio-fuzz-boundary\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n{}\r\n--folio-fuzz-boundary--\r\n"))
	f.Add([]byte("--folio-fuzz-boundary\r\n\r\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := http.NewRequest("POST", s.URL()+"/api/templates/import", bytes.NewReader(body))
		if err != nil {
			t.Skip()
		}
		req.Header.Set("Authorization", "Bearer "+u.token)
		req.Header.Set("Content-Type", "multipart/form-data; boundary=folio-fuzz-boundary")
		res, err := s.client.Do(req)
		if err != nil {
			t.Fatalf("request: %v", err)
		}
		defer res.Body.Close()
		var out bytes.Buffer
		out.ReadFrom(res.Body)
		if res.StatusCode >= 500 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("import answered %d %s: %.300s", res.StatusCode, res.Header.Get("Content-Type"), out.String())
		}
	})
}
