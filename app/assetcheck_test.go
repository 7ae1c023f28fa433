package app

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/goregular"
)

func testPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewNRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCheckAssetKinds(t *testing.T) {
	otf, err := os.ReadFile("testdata/assets/cfftest.otf")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, kind, format string
		data               []byte
	}{
		{"png", AssetImage, "png", testPNG(t, 3, 2)},
		{"ttf", AssetFont, "ttf", goregular.TTF},
		{"otf", AssetFont, "otf", otf},
		{"svg", AssetImage, "svg", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="20" height="10"><defs><linearGradient id="g"/></defs><rect fill="url(#g)" width="20" height="10"/><use href="#g"/></svg>`)},
		{"pdf", AssetPDF, "pdf", readAsset(t, "terms.pdf")},
		{"pdf with object streams", AssetPDF, "pdf", readAsset(t, "terms-objstm.pdf")},
		{"pdf/a", AssetPDF, "pdf", readAsset(t, "pdfa-cover.pdf")},
		{"minimal pdf", AssetPDF, "pdf", minimalPDF(pageObjects("", "")...)},
	}
	for _, c := range cases {
		got, err := checkAsset(c.data)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.kind != c.kind || got.format != c.format {
			t.Errorf("%s: kind %s format %s, want %s %s", c.name, got.kind, got.format, c.kind, c.format)
		}
	}
	f, _ := checkAsset(goitalic.TTF)
	if f.font.Family != "Go" || f.font.Style != "italic" || f.font.Weight != 400 || f.font.Outlines != "truetype" {
		t.Errorf("Go Italic: %+v", f.font)
	}
	if c, _ := checkAsset(cases[0].data); c.width != 3 || c.height != 2 {
		t.Errorf("png size %dx%d", c.width, c.height)
	}
}

func TestCheckAssetRefusals(t *testing.T) {
	ttf := goregular.TTF
	truncated := ttf[:len(ttf)/2]
	// A font whose glyf table is cut: the table directory still points past the end.
	noCmap := bytes.Replace(append([]byte(nil), ttf...), []byte("cmap"), []byte("cmaX"), 1)
	svgHead := `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">`
	bigHeader := testPNG(t, 1, 1)
	binary.BigEndian.PutUint32(bigHeader[16:], 20000)
	binary.BigEndian.PutUint32(bigHeader[29:], crc32.ChecksumIEEE(bigHeader[12:29]))
	cases := []struct{ name, data, want string }{
		{"empty", "", "empty"},
		{"text", "hello", "not a PNG"},
		{"ttc", "ttcf\x00\x01\x00\x00" + strings.Repeat("\x00", 20), "collections"},
		{"woff", "wOFF" + strings.Repeat("\x00", 40), "WOFF"},
		{"truncated font", string(truncated), "font"},
		{"no cmap", string(noCmap), `"cmap"`},
		{"script", svgHead + `<script>alert(1)</script></svg>`, "<script>"},
		{"foreignObject", svgHead + `<foreignObject><div/></foreignObject></svg>`, "foreignObject"},
		{"onload", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`, "event handler"},
		{"external href", svgHead + `<image href="https://evil.example/x.png"/></svg>`, "evil.example"},
		{"xlink href", svgHead + `<use xlink:href="file:///etc/passwd#x"/></svg>`, "file:///etc/passwd"},
		{"css url", svgHead + `<rect style="fill:url(https://evil.example/a)"/></svg>`, "url("},
		{"css import", svgHead + `<style>@import "https://evil.example/a.css";</style></svg>`, "@import"},
		{"doctype", `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>`, "DOCTYPE"},
		{"stylesheet pi", `<?xml-stylesheet href="https://evil.example/a.css"?><svg xmlns="http://www.w3.org/2000/svg"/>`, "processing instruction"},
		{"html", `<html><body/></html>`, "root element is <html>"},
		{"broken xml", svgHead + `<rect></svg>`, "well-formed"},
		{"deep", `<svg xmlns="http://www.w3.org/2000/svg">` + strings.Repeat("<g>", 100) + strings.Repeat("</g>", 100) + `</svg>`, "deep"},
		{"pdf no eof", "%PDF-1.7\n1 0 obj<<>>endobj\n", "EOF"},
		{"png too wide", string(bigHeader), "pixels"},
	}
	for _, c := range cases {
		_, err := checkAsset([]byte(c.data))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		e, ok := err.(*Error)
		if !ok || (e.Code != ECodeAssetInvalid && e.Code != ECodeAssetTooLarge) {
			t.Errorf("%s: %v, want an ERR_ASSET_ error", c.name, err)
			continue
		}
		if !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: %q does not say %q", c.name, e.Message, c.want)
		}
	}
}

// TestCheckFontDamagedTables overwrites each table of a real font in turn:
// a damaged table every renderer reads is refused with a message naming
// it (a panic inside the parser included), and whatever is accepted still
// describes itself sanely.
func TestCheckFontDamagedTables(t *testing.T) {
	src := goregular.TTF
	refused := map[string]string{"cmap": "Cmap", "head": "units per em", "hhea": "hhea", "maxp": "maxp", "name": "name",
		"glyf": "glyf", "loca": "damaged"}
	n := int(binary.BigEndian.Uint16(src[4:]))
	for i := range n {
		e := src[12+16*i:]
		tag := strings.TrimSpace(string(e[:4]))
		off, size := binary.BigEndian.Uint32(e[8:]), binary.BigEndian.Uint32(e[12:])
		b := append([]byte(nil), src...)
		for j := off; j < off+min(size, 512); j++ {
			b[j] = 0xff
		}
		c, err := checkAsset(b)
		if want, ok := refused[tag]; ok {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s damaged: %v, want a refusal saying %q", tag, err, want)
			}
			continue
		}
		if err == nil && (c.font.Weight < 1 || c.font.Weight > 1000 || c.font.Family == "") {
			t.Errorf("%s damaged: accepted as %+v", tag, c.font)
		}
	}
}

func TestAssetRefs(t *testing.T) {
	schema := `{"sections":[{"id":"b","components":[{"type":"image","props":{"src":"asset:logo"}},
		{"type":"text","props":{"content":"asset: not a ref","fontFamily":"asset:ast_123"}},
		{"type":"image","props":{"src":" asset:logo "}}]}],"attachAfter":["asset:terms"]}`
	got := strings.Join(AssetRefs([]byte(schema)), ",")
	if want := "ast_123,logo,terms"; got != want {
		t.Errorf("refs %q, want %q", got, want)
	}
	if AssetRefs([]byte(`{"sections":[]}`)) != nil {
		t.Error("refs in a schema without any")
	}
}

func TestPlanAssetBytes(t *testing.T) {
	free := Plans["free"]
	if err := free.CheckAssetBytes(100<<20-10, 10); err != nil {
		t.Fatalf("exactly the quota: %v", err)
	}
	err := free.CheckAssetBytes(100<<20-10, 11)
	if ErrorCode(err) != ECodeAssetQuota || !strings.Contains(err.Error(), "100 MB") {
		t.Fatalf("over quota: %v", err)
	}
	if err := Plans[PlanUnlimited].CheckAssetBytes(1<<40, 1<<30); err != nil {
		t.Fatalf("unlimited: %v", err)
	}
}

// checkWithin runs checkAsset and fails when it has not answered within a
// half a minute: a file that makes a parser loop is a hostile file the
// upload must not hang on, and the fuzzer keeps it as a crasher.
func checkWithin(t *testing.T, data []byte) (*checked, error) {
	type result struct {
		c   *checked
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := checkAsset(data)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.c, r.err
	case <-time.After(30 * time.Second): // a hang guard, far above any real check
		t.Fatalf("checkAsset did not answer within 30 s for %d bytes", len(data))
	}
	return nil, nil
}

// FuzzAssetFont feeds the font check mutations of real fonts: it must
// answer (accept or refuse with ERR_ASSET_), never panic or hang.
func FuzzAssetFont(f *testing.F) {
	otf, _ := os.ReadFile("testdata/assets/cfftest.otf")
	f.Add(otf)
	ttf, _ := os.ReadFile("testdata/assets/glyftest.ttf")
	f.Add(ttf)
	f.Add(goregular.TTF[:4096])
	f.Add([]byte("OTTO\x00\x01\x00\x00"))
	f.Add([]byte("\x00\x01\x00\x00\x00\x01\x00\x10\x00\x00\x00\x00cmap\x00\x00\x00\x00\x00\x00\x00\x1c\x00\x00\x00\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := checkWithin(t, data)
		if err != nil {
			if ErrorCode(err) == "" {
				t.Fatalf("not an *Error: %v", err)
			}
			return
		}
		if c.kind == AssetFont && (c.font == nil || c.font.Family == "") {
			t.Fatalf("font accepted without a family: %+v", c.font)
		}
	})
}

// FuzzAssetSVG feeds the SVG check: a file it accepts holds no script,
// event handler or outside reference.
func FuzzAssetSVG(f *testing.F) {
	f.Add(`<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>`)
	f.Add(`<svg xmlns="http://www.w3.org/2000/svg"><script>x</script></svg>`)
	f.Add(`<svg xmlns="http://www.w3.org/2000/svg"><use href="#a"/><style>a{fill:url(#g)}</style></svg>`)
	f.Add(`<?xml version="1.0" encoding="UTF-8"?><svg xmlns="http://www.w3.org/2000/svg" onclick="x"/>`)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := checkWithin(t, []byte(s))
		if err != nil {
			if ErrorCode(err) == "" {
				t.Fatalf("not an *Error: %v", err)
			}
			return
		}
		if c.format == "svg" {
			l := strings.ToLower(s)
			if strings.Contains(l, "<script") || strings.Contains(l, "http://evil") {
				t.Fatalf("accepted %q", s)
			}
		}
	})
}
