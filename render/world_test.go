package render

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// worldInvoice is one invoice's words in one language.
type worldInvoice struct {
	lang                          string
	title, customer, item1, item2 string
	note                          string
}

// worldInvoices are the languages the engine must draw and extract with
// no setup: Latin, Greek and Cyrillic in Noto Sans, the rest from the
// fallback chain (CJK, Arabic, Hebrew, Devanagari, Thai, symbols and
// monochrome emoji).
var worldInvoices = []worldInvoice{
	{"de", "Rechnung Nr. 2026-17", "Jürgen Weiß, Straße 5, München", "Größenänderung", "Beratung (Stunden)", "Zahlbar binnen 14 Tagen ✅"},
	{"pl", "Faktura nr 2026-17", "Łukasz Żółć, ul. Świętokrzyska 3", "Usługa księgowa", "Źródło zasilania", "Płatne w ciągu 14 dni ❤"},
	{"el", "Τιμολόγιο αρ. 2026-17", "Γιώργος Παπαδόπουλος, Αθήνα", "Συμβουλευτικές υπηρεσίες", "Λογισμικό", "Πληρωμή εντός 14 ημερών ★"},
	{"ru", "Счёт № 2026-17", "Иван Петров, Москва", "Консультационные услуги", "Программное обеспечение", "Оплата в течение 14 дней →"},
	{"zh", "发票 2026-17", "北京市朝阳区客户公司", "咨询服务", "软件许可证", "请在十四天内付款。谢谢！😀"},
	{"ja", "請求書 2026-17", "東京都千代田区株式会社テスト", "コンサルティング", "ソフトウェア", "お支払いは十四日以内にお願いします。"},
	{"ko", "청구서 2026-17", "서울특별시 강남구 고객회사", "컨설팅 서비스", "소프트웨어 라이선스", "십사일 이내에 지불해 주십시오 ✅"},
	{"ar", "فاتورة رقم ١٧", "شركة العميل، القاهرة", "خدمات استشارية", "ترخيص البرمجيات", "يرجى الدفع خلال أربعة عشر يوما"},
	{"he", "חשבונית מספר 17", "חברת הלקוח, תל אביב", "שירותי ייעוץ", "רישיון תוכנה", "נא לשלם תוך ארבעה עשר ימים"},
	{"hi", "चालान संख्या 17", "ग्राहक कंपनी, नई दिल्ली", "परामर्श सेवाएँ", "सॉफ़्टवेयर लाइसेंस", "कृपया चौदह दिनों के भीतर भुगतान करें"},
	{"th", "ใบแจ้งหนี้ 2026-17", "บริษัทลูกค้า กรุงเทพมหานคร", "บริการให้คำปรึกษา", "ใบอนุญาตซอฟต์แวร์", "กรุณาชำระภายในสิบสี่วัน"},
}

// worldTemplate is the invoice every language fills in.
const worldTemplate = `{"sections":[
 {"id":"h","role":"header","components":[{"type":"text","props":{"content":"Folio · {{lang}}","style":{"fontSize":8}}}]},
 {"id":"b","components":[
  {"type":"heading","props":{"content":"{{title}}"}},
  {"type":"keyValue","props":{"items":[{"label":"{{lang}}","value":"{{customer}}"}]}},
  {"type":"table","props":{"rows":"items","columns":[
    {"header":"#","value":"{{row.n}}","width":10},
    {"header":"{{title}}","value":"{{row.name}}"},
    {"header":"EUR","value":"{{row.price}}","width":25,"align":"right"}]}},
  {"type":"text","props":{"content":"{{note}}"}}]},
 {"id":"f","role":"footer","components":[{"type":"text","props":{"content":"{{page}} / {{pages}}","style":{"align":"center","fontSize":8}}}]}]}`

func (w worldInvoice) vars() map[string]any {
	return map[string]any{"lang": w.lang, "title": w.title, "customer": w.customer, "note": w.note,
		"items": []any{map[string]any{"n": 1, "name": w.item1, "price": "1.234,56"}, map[string]any{"n": 2, "name": w.item2, "price": "99,00"}}}
}

var squeeze = regexp.MustCompile(`\s+`)

// bidiMarks are the embedding marks pdftotext puts around right-to-left
// runs (U+202A-U+202E); they are not text.
var bidiMarks = strings.NewReplacer("\u202a", "", "\u202b", "", "\u202c", "", "\u202d", "", "\u202e", "")

// normalise drops white space and bidi marks: pdftotext guesses spaces
// from glyph positions (it puts one inside "कंपनी" and moves one around
// an Arabic comma), which is not what is tested here.
func normalise(s string) string { return squeeze.ReplaceAllString(bidiMarks.Replace(s), "") }

// TestWorldInvoices renders the same invoice in eleven languages with
// emoji and checks it with independent readers: pdftotext gives every
// text back in logical order, pdffonts shows every font embedded as a
// tagged subset with a ToUnicode map, no character is reported missing,
// and the page looks like its golden picture (glyphs, not boxes; run
// with -update to redraw testdata/world/*.png, then look at them).
func TestWorldInvoices(t *testing.T) {
	needTool(t, "pdftotext")
	needTool(t, "pdffonts")
	needTool(t, "pdftoppm")
	tpl := MustCompile(t, schemaDef(worldTemplate))
	if w := tpl.Warnings(); len(w) > 0 {
		t.Errorf("warnings: %v", w)
	}
	for _, w := range worldInvoices {
		t.Run(w.lang, func(t *testing.T) {
			vars := w.vars()
			if m := tpl.MissingGlyphs(vars); len(m) > 0 {
				t.Errorf("characters without a font: %v", m)
			}
			pdf := MustRender(t, tpl, vars, Options{})
			raw := ExtractText(t, pdf)
			got := normalise(raw)
			for _, want := range []string{w.title, w.customer, w.item1, w.item2, w.note, "1 / 1"} {
				if !strings.Contains(got, normalise(want)) {
					t.Errorf("pdftotext lacks %q in:\n%s", want, raw)
				}
			}
			names := fonts(t, pdf) // checks emb, sub, uni and the tag
			if len(names) == 0 {
				t.Error("no fonts")
			}
			path := writeTemp(t, pdf)
			img := renderCrop(t, path, 80, crop{page: 1, w: 210, h: 110})
			golden := filepath.Join("testdata", "world", w.lang+".png")
			if *update {
				var buf bytes.Buffer
				if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, img); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			file, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			old, err := png.Decode(bytes.NewReader(file))
			if err != nil {
				t.Fatal(err)
			}
			if differ, blocks := blockDifference(old, img); differ*200 > blocks {
				t.Errorf("page differs from %s in %d of %d blocks (run with -update and look at it)", golden, differ, blocks)
			}
		})
	}
}

// TestMissingGlyphsNeverSilent checks that a character no font draws is
// a warning naming it and its place, and an error when the schema asks.
func TestMissingGlyphsNeverSilent(t *testing.T) {
	const ch = "\U00011A00" // ZANABAZAR SQUARE LETTER A: in no embedded font
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"x `+ch+` {{name}}"}}]}]}`))
	w := tpl.Warnings()
	if len(w) != 1 || w[0].Path != "schema.sections[0].components[0].props.content" || !strings.Contains(w[0].Message, "U+11A00") || !strings.Contains(w[0].Message, "--font-dir") {
		t.Errorf("warnings = %v", w)
	}
	m := tpl.MissingGlyphs(map[string]any{"name": "a" + ch, "ok": "中文"})
	if len(m) != 1 || m[0].Variable != "name" || !strings.Contains(m[0].Message, "U+11A00") {
		t.Errorf("MissingGlyphs = %v", m)
	}
	_, err := MustEngine(t).Compile(schemaDef(`{"missingGlyphs":"error","sections":[{"id":"b","components":[{"type":"text","props":{"content":"x ` + ch + `"}}]}]}`))
	if err == nil || !strings.Contains(err.Error(), "U+11A00") {
		t.Errorf("missingGlyphs error: Compile = %v", err)
	}
	strict := MustCompile(t, schemaDef(`{"missingGlyphs":"error","sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{name}}"}}]}]}`))
	if _, err := strict.Values(map[string]any{"name": ch}); err == nil || !strings.Contains(err.Error(), "name") {
		t.Errorf("missingGlyphs error: Values = %v", err)
	}
}

// TestFontFamily checks fontFamily on the schema and on a component, and
// the error naming the families there are.
func TestFontFamily(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"fontFamily":"Noto Serif","sections":[{"id":"b","components":[
		{"type":"text","props":{"content":"serif"}},
		{"type":"text","fontFamily":"noto sans mono","props":{"content":"mono"}},
		{"type":"text","props":{"content":"sans","style":{"fontFamily":"Noto Sans","bold":true}}}]}]}`))
	got := strings.Join(fonts(t, MustRender(t, tpl, nil, Options{})), " ")
	for _, want := range []string{"NotoSerif-Regular", "NotoSansMono-Regular", "NotoSans-Bold"} {
		if !strings.Contains(got, want) {
			t.Errorf("fonts %s lack %s", got, want)
		}
	}
	_, err := MustEngine(t).Compile(schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","fontFamily":"Comic","props":{"content":"x"}}]}]}`))
	if err == nil || !strings.Contains(err.Error(), `unknown font family "Comic"`) || !strings.Contains(err.Error(), "Noto Serif") {
		t.Errorf("Compile = %v", err)
	}
}

// pdffontsLines is pdffonts' table, for failure messages.
func pdffontsLines(t *testing.T, pdf []byte) string {
	out, _ := exec.Command("pdffonts", writeTemp(t, pdf)).CombinedOutput()
	return string(out)
}

// BenchmarkRenderWorldInvoice renders the one-page world invoice in
// German (Noto Sans only), Chinese (the CJK fallback) and Arabic (the
// Arabic fallback, right to left, joined).
func BenchmarkRenderWorldInvoice(b *testing.B) {
	tpl := MustCompile(b, schemaDef(worldTemplate))
	for _, w := range worldInvoices {
		if w.lang != "de" && w.lang != "zh" && w.lang != "ar" {
			continue
		}
		b.Run(w.lang, func(b *testing.B) {
			values, err := tpl.Values(w.vars())
			if err != nil {
				b.Fatal(err)
			}
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if _, err := tpl.Render(context.Background(), &buf, PDF, values, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len()), "bytes/doc")
		})
	}
}
