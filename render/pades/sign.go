// Package pades signs finished PDFs: PAdES baseline B-B (and B-T with a
// time-stamp authority) signatures appended as an incremental update, so
// that whatever produced the PDF (Folio's writer, a merge, an embedded
// e-invoice) stays byte for byte as it was. The PDF is read with pdfcpu;
// the signature is CMS written with crypto/x509 and cryptobyte (cms.go).
package pades

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

func init() {
	// pdfcpu otherwise writes a configuration directory under $HOME.
	model.ConfigPath = "disable"
}

// Options describe one signature.
type Options struct {
	// Name is the signer's name (/Name); Reason and Location are shown by
	// readers and in the visible appearance.
	Name, Reason, Location string
	// Time is the claimed signing time (/M).
	Time time.Time
	// Visible draws the signature on a page; otherwise its widget has no
	// size.
	Visible bool
	// Page is the page of the widget, from 1; 0 is the last page, -1 the
	// first.
	Page int
	// Rect is the visible widget in points: x, y, width, height. With
	// FromTop, x and y place its top left corner from the page's top left;
	// otherwise it sits in the lower right corner, 40 points from the
	// edges. No width or height: 200 × 70 points.
	Rect [4]float64
	// FromTop uses Rect's x and y.
	FromTop bool
	// TimeStamp returns an RFC 3161 token over the signature value (B-T);
	// nil signs B-B.
	TimeStamp func(ctx context.Context, signature []byte, h crypto.Hash) ([]byte, error)
}

// Error is a PDF that cannot be signed.
type Error struct{ Msg string }

func (e *Error) Error() string { return "pades: " + e.Msg }

// Sign appends a signature to pdf and returns the signed file.
func Sign(ctx context.Context, pdf []byte, s Signer, o Options) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil { // pdfcpu on a file it cannot read
			out, err = nil, &Error{fmt.Sprintf("reading the PDF: %v", r)}
		}
	}()
	if len(s.Chain) == 0 || s.Key == nil {
		return nil, errors.New("pades: a signer needs a key and its certificate")
	}
	h, _, _, err := hashFor(s.Key.Public())
	if err != nil {
		return nil, err
	}
	reserve := 4096
	for _, c := range s.Chain {
		reserve += len(c.Raw)
	}
	if o.TimeStamp != nil {
		reserve += 16384
	}
	for range 2 {
		out, contents, err := prepare(pdf, o, reserve)
		if err != nil {
			return nil, err
		}
		hh := h.New()
		hh.Write(out[:contents[0]])
		hh.Write(out[contents[1]:])
		in := cmsInput{signer: s, digest: hh.Sum(nil)}
		if o.TimeStamp != nil {
			in.timestamp = func(sig []byte, h crypto.Hash) ([]byte, error) { return o.TimeStamp(ctx, sig, h) }
		}
		cms, err := buildCMS(in)
		if err != nil {
			return nil, err
		}
		if 2*len(cms) > contents[1]-contents[0]-2 {
			reserve = len(cms) + 4096 // a longer chain or token than guessed: once more
			continue
		}
		hex.Encode(out[contents[0]+1:], cms)
		return out, nil
	}
	return nil, errors.New("pades: the signature does not fit its placeholder")
}

// zlibWriters keep the compressors of appearance streams (each holds
// about 800 KB of tables).
var zlibWriters = sync.Pool{New: func() any { w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed); return w }}

// startxref finds the offset of the file's last cross-reference section.
var startxrefRE = regexp.MustCompile(`startxref\s+(\d+)\s+%%EOF\s*$`)

// prepare writes the incremental update with a zeroed /Contents of
// reserve bytes and the final /ByteRange; contents is the placeholder's
// span, its angle brackets included.
func prepare(pdf []byte, o Options, reserve int) (out []byte, contents [2]int, err error) {
	tail := pdf[max(0, len(pdf)-1024):]
	m := startxrefRE.FindSubmatch(tail)
	if m == nil {
		return nil, contents, &Error{"the file does not end with startxref and %%EOF"}
	}
	prev, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil || prev <= 0 || prev >= int64(len(pdf)) {
		return nil, contents, &Error{"the file's startxref is out of range"}
	}
	streamXref := !bytes.HasPrefix(pdf[prev:], []byte("xref"))
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	ctx, err := pdfcpu.Read(bytes.NewReader(pdf), conf)
	if err != nil {
		return nil, contents, &Error{"reading the PDF: " + err.Error()}
	}
	if ctx.Encrypt != nil {
		return nil, contents, &Error{"the PDF is encrypted; sign before encrypting is not offered"}
	}
	if ctx.Root == nil {
		return nil, contents, &Error{"the PDF has no catalog"}
	}
	if err := ctx.EnsurePageCount(); err != nil {
		return nil, contents, &Error{"reading the pages: " + err.Error()}
	}
	pageNr := o.Page
	switch {
	case pageNr == 0:
		pageNr = ctx.PageCount
	case pageNr < 0:
		pageNr = 1
	case pageNr > ctx.PageCount:
		return nil, contents, &Error{fmt.Sprintf("page %d does not exist: the document has %d", pageNr, ctx.PageCount)}
	}
	pageDict, pageRef, inh, err := ctx.PageDict(pageNr, false)
	if err != nil {
		return nil, contents, &Error{"reading page " + strconv.Itoa(pageNr) + ": " + err.Error()}
	}
	catalog, err := ctx.Catalog()
	if err != nil {
		return nil, contents, &Error{"reading the catalog: " + err.Error()}
	}

	if ctx.Size == nil || *ctx.Size <= 0 {
		return nil, contents, &Error{"the PDF's trailer has no /Size"}
	}
	size := *ctx.Size
	next := func() int { size++; return size - 1 }
	sigNr, widgetNr, apNr := next(), next(), next()
	u := &update{base: len(pdf)}
	if !bytes.HasSuffix(pdf, []byte("\n")) {
		u.buf.WriteString("\n")
	}

	// The signature dictionary, with placeholders.
	u.begin(sigNr)
	u.buf.WriteString("<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached\n/ByteRange ")
	byteRangeAt := u.buf.Len()
	u.buf.WriteString("[0 0000000000 0000000000 0000000000]")
	byteRangeEnd := u.buf.Len()
	u.buf.WriteString("\n/Contents ")
	contents[0] = u.base + u.buf.Len()
	u.buf.WriteString("<" + strings.Repeat("0", 2*reserve) + ">")
	contents[1] = u.base + u.buf.Len()
	fmt.Fprintf(&u.buf, "\n/M %s", textString(pdfDate(o.Time)))
	if o.Name != "" {
		fmt.Fprintf(&u.buf, " /Name %s", textString(o.Name))
	}
	if o.Reason != "" {
		fmt.Fprintf(&u.buf, " /Reason %s", textString(o.Reason))
	}
	if o.Location != "" {
		fmt.Fprintf(&u.buf, " /Location %s", textString(o.Location))
	}
	u.buf.WriteString(" >>")
	u.end()

	// The widget (merged with its field) and its appearance.
	rect := [4]float64{}
	box := inh.MediaBox
	if box == nil {
		if a, ok := pageDict.Find("MediaBox"); ok {
			if arr, err := ctx.DereferenceArray(a); err == nil && len(arr) == 4 {
				box, _ = ctx.RectForArray(arr)
			}
		}
	}
	if o.Visible {
		r := o.Rect
		if r[2] <= 0 || r[3] <= 0 {
			r[2], r[3] = 200, 70
		}
		switch {
		case o.FromTop && box != nil:
			r[0], r[1] = box.LL.X+r[0], box.UR.Y-r[1]-r[3]
		case o.FromTop:
			return nil, contents, &Error{"the page has no MediaBox"}
		case box != nil:
			r[0], r[1] = box.UR.X-40-r[2], box.LL.Y+40
		default:
			r[0], r[1] = 40, 40
		}
		rect = [4]float64{r[0], r[1], r[0] + r[2], r[1] + r[3]}
	}
	fieldName, err := uniqueFieldName(ctx, catalog)
	if err != nil {
		return nil, contents, err
	}
	u.begin(widgetNr)
	fmt.Fprintf(&u.buf, "<< /Type /Annot /Subtype /Widget /FT /Sig /T %s /V %d 0 R /F 4 /P %s\n/Rect [%s %s %s %s] /AP << /N %d 0 R >> >>",
		textString(fieldName), sigNr, pageRef.PDFString(), num(rect[0]), num(rect[1]), num(rect[2]), num(rect[3]), apNr)
	u.end()
	w, hgt := rect[2]-rect[0], rect[3]-rect[1]
	var stream []byte
	filter := ""
	if o.Visible {
		var z bytes.Buffer
		zw := zlibWriters.Get().(*zlib.Writer)
		zw.Reset(&z)
		zw.Write(appearance(w, hgt, o))
		zw.Close()
		zlibWriters.Put(zw)
		stream, filter = z.Bytes(), " /Filter /FlateDecode"
	}
	u.begin(apNr)
	fmt.Fprintf(&u.buf, "<< /Type /XObject /Subtype /Form /BBox [0 0 %s %s] /Resources << >>%s /Length %d >>\nstream\n", num(w), num(hgt), filter, len(stream))
	u.buf.Write(stream)
	u.buf.WriteString("\nendstream")
	u.end()

	// The page, with the widget among its annotations.
	page := pageDict.Clone().(types.Dict)
	var annots types.Array
	if a, ok := page.Find("Annots"); ok && a != nil {
		arr, err := ctx.DereferenceArray(a)
		if err != nil {
			return nil, contents, &Error{"reading the page's annotations: " + err.Error()}
		}
		annots = append(annots, arr...)
	}
	annots = append(annots, *types.NewIndirectRef(widgetNr, 0))
	page.Update("Annots", annots)
	u.begin(pageRef.ObjectNumber.Value(), pageRef.GenerationNumber.Value())
	u.buf.WriteString(page.PDFString())
	u.end()

	// The catalog, with an AcroForm listing the field.
	cat := catalog.Clone().(types.Dict)
	form := types.Dict{}
	formRef := (*types.IndirectRef)(nil)
	if f, ok := cat.Find("AcroForm"); ok && f != nil {
		if ir, ok := f.(types.IndirectRef); ok {
			formRef = &ir
		}
		d, err := ctx.DereferenceDict(f)
		if err != nil {
			return nil, contents, &Error{"reading the AcroForm: " + err.Error()}
		}
		if d != nil {
			form = d.Clone().(types.Dict)
		}
	}
	var fields types.Array
	if f, ok := form.Find("Fields"); ok && f != nil {
		arr, err := ctx.DereferenceArray(f)
		if err != nil {
			return nil, contents, &Error{"reading the form's fields: " + err.Error()}
		}
		fields = append(fields, arr...)
	}
	fields = append(fields, *types.NewIndirectRef(widgetNr, 0))
	form.Update("Fields", fields)
	form.Update("SigFlags", types.Integer(3))
	if formRef != nil {
		u.begin(formRef.ObjectNumber.Value(), formRef.GenerationNumber.Value())
		u.buf.WriteString(form.PDFString())
		u.end()
	} else {
		cat.Update("AcroForm", form)
	}
	rootNr, rootGen := ctx.Root.ObjectNumber.Value(), ctx.Root.GenerationNumber.Value()
	if formRef == nil {
		u.begin(rootNr, rootGen)
		u.buf.WriteString(cat.PDFString())
		u.end()
	}
	xrefNr := 0
	if streamXref {
		xrefNr = next()
	}

	// The trailer: the same Root, Info and first ID, a Prev to the last section.
	trailer := fmt.Sprintf("/Size %d /Root %d %d R /Prev %d", size, rootNr, rootGen, prev)
	if ctx.Info != nil {
		trailer += " /Info " + ctx.Info.PDFString()
	}
	if len(ctx.ID) == 2 {
		trailer += " /ID " + ctx.ID.PDFString()
	}
	if streamXref {
		u.xrefStream(xrefNr, trailer)
	} else {
		u.xrefTable(trailer)
	}
	out = make([]byte, 0, len(pdf)+u.buf.Len())
	out = append(out, pdf...)
	out = append(out, u.buf.Bytes()...)
	br := fmt.Sprintf("[0 %d %d %d]", contents[0], contents[1], len(out)-contents[1])
	span := out[u.base+byteRangeAt : u.base+byteRangeEnd]
	if len(br) > len(span) {
		return nil, contents, &Error{"the file is too large to sign"}
	}
	copy(span, br+strings.Repeat(" ", len(span)-len(br)))
	return out, contents, nil
}

// uniqueFieldName is "Signature<n>", unused by the form's fields.
func uniqueFieldName(ctx *model.Context, catalog types.Dict) (string, error) {
	names := map[string]bool{}
	if f, ok := catalog.Find("AcroForm"); ok && f != nil {
		if d, err := ctx.DereferenceDict(f); err == nil && d != nil {
			if fs, ok := d.Find("Fields"); ok {
				if arr, err := ctx.DereferenceArray(fs); err == nil {
					for _, o := range arr {
						if fd, err := ctx.DereferenceDict(o); err == nil && fd != nil {
							if t := fd.StringEntry("T"); t != nil {
								names[*t] = true
							}
						}
					}
				}
			}
		}
	}
	for n := 1; ; n++ {
		if name := "Signature" + strconv.Itoa(n); !names[name] {
			return name, nil
		}
	}
}

// update is an incremental update being written.
type update struct {
	base    int // the offset its first byte will have
	buf     bytes.Buffer
	offsets []xrefEntry
}

type xrefEntry struct{ nr, gen, offset int }

func (u *update) begin(nr int, gen ...int) {
	g := 0
	if len(gen) > 0 {
		g = gen[0]
	}
	u.offsets = append(u.offsets, xrefEntry{nr, g, u.base + u.buf.Len()})
	fmt.Fprintf(&u.buf, "%d %d obj\n", nr, g)
}

func (u *update) end() { u.buf.WriteString("\nendobj\n") }

// subsections groups the entries into runs of consecutive numbers.
func (u *update) subsections() [][]xrefEntry {
	s := append([]xrefEntry(nil), u.offsets...)
	for i := 1; i < len(s); i++ { // few entries: insertion sort
		for j := i; j > 0 && s[j].nr < s[j-1].nr; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	var out [][]xrefEntry
	for i, e := range s {
		if i > 0 && e.nr == s[i-1].nr+1 {
			out[len(out)-1] = append(out[len(out)-1], e)
			continue
		}
		out = append(out, []xrefEntry{e})
	}
	return out
}

func (u *update) xrefTable(trailer string) {
	at := u.base + u.buf.Len()
	u.buf.WriteString("xref\n")
	for _, sub := range u.subsections() {
		fmt.Fprintf(&u.buf, "%d %d\n", sub[0].nr, len(sub))
		for _, e := range sub {
			fmt.Fprintf(&u.buf, "%010d %05d n\r\n", e.offset, e.gen)
		}
	}
	fmt.Fprintf(&u.buf, "trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n", trailer, at)
}

// xrefStream writes a cross-reference stream (the file's last section
// was one: a reader of the update then needs PDF 1.5 already).
func (u *update) xrefStream(nr int, trailer string) {
	u.offsets = append(u.offsets, xrefEntry{nr, 0, u.base + u.buf.Len()})
	at := u.base + u.buf.Len()
	var index strings.Builder
	var data bytes.Buffer
	for _, sub := range u.subsections() {
		fmt.Fprintf(&index, "%d %d ", sub[0].nr, len(sub))
		for _, e := range sub {
			data.Write([]byte{1, byte(e.offset >> 24), byte(e.offset >> 16), byte(e.offset >> 8), byte(e.offset), byte(e.gen >> 8), byte(e.gen)})
		}
	}
	fmt.Fprintf(&u.buf, "%d 0 obj\n<< /Type /XRef %s /Index [%s] /W [1 4 2] /Length %d >>\nstream\n", nr, trailer, strings.TrimSpace(index.String()), data.Len())
	u.buf.Write(data.Bytes())
	fmt.Fprintf(&u.buf, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", at)
}

// num writes a coordinate.
func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// pdfDate is a PDF date string in UTC.
func pdfDate(t time.Time) string { return t.UTC().Format("D:20060102150405Z") }

// textString is a PDF text string: a literal for printable ASCII, else
// UTF-16BE with a byte order mark, in hex.
func textString(s string) string {
	ascii := true
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			ascii = false
			break
		}
	}
	if ascii {
		r := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`)
		return "(" + r.Replace(s) + ")"
	}
	b := []byte{0xfe, 0xff}
	for _, c := range utf16.Encode([]rune(s)) {
		b = append(b, byte(c>>8), byte(c))
	}
	return "<" + hex.EncodeToString(b) + ">"
}
