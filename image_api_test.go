package main

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// flatPNG16 is a w×h 16-bit RGBA PNG of one colour, written row by row:
// a few hundred kilobytes to send, w×h×8 bytes for Go's decoder to hold.
func flatPNG16(w, h int) []byte {
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(kind string, data []byte) {
		out.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data))))
		body := append([]byte(kind), data...)
		out.Write(body)
		out.Write(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(body)))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	chunk("IHDR", append(ihdr, 16, 6, 0, 0, 0))
	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestSpeed)
	row := make([]byte, 1+8*w)
	for x := range w {
		copy(row[1+8*x:], []byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xff, 0xff})
	}
	zw.Write(row)
	up := make([]byte, len(row)) // filter Up: the same as the row above
	up[0] = 2
	for range h - 1 {
		zw.Write(up)
	}
	zw.Close()
	chunk("IDAT", idat.Bytes())
	chunk("IEND", nil)
	return out.Bytes()
}

// heapGrowth is what the whole process allocates while f runs.
func heapGrowth(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The image bomb of issue 18 (5,000 × 5,000 pixels, 16-bit RGBA, about
// 270 KB) used to be decoded and converted by every schema check, about
// 300 MB a request outside the render memory gate: six concurrent
// validate-schema requests with a read-only key took 2.7 GB. Its header
// alone now refuses it, with what it would take and what to do, and
// template create and import refuse it the same way.
func TestImageBombIsRefusedFromItsHeader(t *testing.T) {
	s := startServer(t)
	u := s.signup("Bomber")
	readOnly := s.createKey(u.token, map[string]bool{"send_emails": false, "read_analytics": false})
	bomb := "data:image/png;base64," + base64.StdEncoding.EncodeToString(flatPNG16(5000, 5000))
	schema := map[string]any{"sections": []any{map[string]any{"id": "b", "components": []any{
		map[string]any{"type": "image", "props": map[string]any{"src": bomb}}}}}}
	body, _ := json.Marshal(map[string]any{"templateType": "attachment", "schema": schema})
	const path = "schema.sections[0].components[0].props.src"
	wantMessage := func(msg string) bool {
		for _, w := range []string{"5000×5000 pixels", "16 bits a channel", "572 MB", "memory budget of 256 MB", "scale it down"} {
			if !strings.Contains(msg, w) {
				return false
			}
		}
		return true
	}

	out := make([]resp, 6)
	start := time.Now()
	grown := heapGrowth(func() {
		var wg sync.WaitGroup
		for i := range out {
			wg.Go(func() { out[i] = s.do("POST", "/api/templates/validate-schema", readOnly, body) })
		}
		wg.Wait()
	})
	took := time.Since(start)
	t.Logf("6 concurrent requests: %s, %d MB allocated", took, grown>>20)
	if grown > 100<<20 {
		t.Errorf("6 concurrent requests allocated %d MB, want well under 100 MB", grown>>20)
	}
	if took > 10*time.Second {
		t.Errorf("6 concurrent requests took %s", took)
	}
	for _, r := range out {
		errs, _ := r.get("errors").([]any)
		if r.status != 200 || r.str("valid") != "false" || len(errs) != 1 {
			t.Fatalf("validate-schema: %d %.500s", r.status, r.raw)
		}
		issue := errs[0].(map[string]any)
		if issue["path"] != path || !wantMessage(issue["message"].(string)) {
			t.Fatalf("issue = %v", issue)
		}
	}

	// Create and import check the schema the same way.
	tpl := map[string]any{"name": "Bomb", "outputFormats": []string{"pdf"}, "schema": schema}
	grown = heapGrowth(func() {
		r := s.do("POST", "/api/templates", u.token, tpl)
		s.wantError(r, 400, "ERR_TMPL_008")
		if !strings.Contains(string(r.raw), path) || !wantMessage(string(r.raw)) {
			t.Errorf("create: %.600s", r.raw)
		}
		exported := s.must(200, "GET", "/api/templates/"+s.createTemplate(u.token, "Plain", invoiceTemplate).str("id")+"/export", u.token, nil)
		exported.body["template"].(map[string]any)["schema"] = schema
		file, _ := json.Marshal(exported.body)
		r = s.upload("/api/templates/import", u.token, file, nil)
		s.wantError(r, 400, "ERR_TMPL_010")
		if r.str("relatedInfo.cause") != "ERR_TMPL_008" || !wantMessage(string(r.raw)) {
			t.Errorf("import: %.600s", r.raw)
		}
	})
	if grown > 100<<20 {
		t.Errorf("create and import allocated %d MB", grown>>20)
	}
}

// A 4096×4096 avatar at 16 bits a channel would take 128 MB to decode: it
// is refused from its header. One that fits is decoded under the render
// engine's memory gate.
func TestAvatarBombIsRefusedFromItsHeader(t *testing.T) {
	s := startServer(t)
	u := s.signup("Avery")
	bomb := base64.StdEncoding.EncodeToString(flatPNG16(4096, 4096))
	var r resp
	grown := heapGrowth(func() { r = s.do("POST", "/api/users/me/avatar", u.token, map[string]any{"imageData": bomb}) })
	s.wantError(r, 400, "ERR_VALID_003")
	for _, w := range []string{"4096x4096 pixels", "16-bit PNG", "128 MB", "at most 100 MB", "8-bit PNG or a JPEG"} {
		if !strings.Contains(r.str("message"), w) {
			t.Errorf("message %q lacks %q", r.str("message"), w)
		}
	}
	if r.str("relatedInfo.field") != "imageData" || r.str("relatedInfo.maxDecodeBytes") == "" {
		t.Errorf("relatedInfo: %s", r.raw)
	}
	if grown > 32<<20 {
		t.Errorf("refusing the avatar allocated %d MB", grown>>20)
	}
	t.Logf("refused in %d MB: %s", grown>>20, r.str("message"))
	// 2048×2048 at 16 bits: 32 MB, decoded and stored.
	ok := s.must(200, "POST", "/api/users/me/avatar", u.token, map[string]any{"imageData": base64.StdEncoding.EncodeToString(flatPNG16(2048, 2048))})
	if ok.str("avatarUrl") == "" {
		t.Fatalf("avatar: %s", ok.raw)
	}
}
