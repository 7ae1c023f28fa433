package render

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"folio/render/internal/fpdf"
	"folio/render/internal/icc"
)

// The business PDF options (docs/templates.md, "Business PDF options"):
// pdfa and watermark on the schema or a request, encrypt and
// documentMetadata on a request only. They share one pipeline: the
// schema's values, then the request's over them, resolved once per render
// into a business and applied by the PDF writer.

// PDFRequest is the business PDF options a generate, batch, preview or
// dry-run request may send, as JSON; ParsePDFOptions checks them.
type PDFRequest struct {
	// PDFA is "2b", "3b", "2u" or "3u" (PDF/A-2 or -3, conformance B or
	// U), or "none" to turn off the template's.
	PDFA json.RawMessage `json:"pdfa,omitempty"`
	// Watermark is {text | image, angle, opacity, position, pages,
	// fontSize, color, width}, or false to turn off the template's (and a
	// preview's DRAFT).
	Watermark json.RawMessage `json:"watermark,omitempty"`
	// Encrypt is {userPassword, ownerPassword, permissions}: AES-256.
	// Never stored: callers keep it out of job rows, logs and webhooks.
	Encrypt json.RawMessage `json:"encrypt,omitempty"`
	// DocumentMetadata is {title, author, subject, keywords, language,
	// creationDate, modificationDate} over the schema's "metadata" (a
	// request's "metadata" is the job's own, SPEC.md).
	DocumentMetadata json.RawMessage `json:"documentMetadata,omitempty"`
	// EInvoice is {profile} (factur-x-en16931, factur-x-basic,
	// xrechnung-cii, ubl) over the schema's einvoice.profile, or false.
	EInvoice json.RawMessage `json:"einvoice,omitempty"`
	// AttachBefore and AttachAfter are lists of PDF assets ("asset:<name
	// or id>") whose pages go before and after the generated ones; [] turns
	// off the template's (merge.go).
	AttachBefore json.RawMessage `json:"attachBefore,omitempty"`
	AttachAfter  json.RawMessage `json:"attachAfter,omitempty"`
	// CountAttachedPages makes "page" and "pages" count the attached pages.
	CountAttachedPages json.RawMessage `json:"countAttachedPages,omitempty"`
	// Sign is {certificate, reason, location, name, visible, page, x, y,
	// width, height}, or false to turn off the template's (sign.go).
	Sign json.RawMessage `json:"sign,omitempty"`
}

// Stored is the request without its secrets: what a job may record.
func (r PDFRequest) Stored() PDFRequest {
	r.Encrypt = nil
	return r
}

// Empty reports whether the request sets no option.
func (r PDFRequest) Empty() bool {
	return len(r.PDFA) == 0 && len(r.Watermark) == 0 && len(r.Encrypt) == 0 && len(r.DocumentMetadata) == 0 && len(r.EInvoice) == 0 &&
		len(r.AttachBefore) == 0 && len(r.AttachAfter) == 0 && len(r.CountAttachedPages) == 0 && len(r.Sign) == 0
}

// PDFOptions are checked business PDF options (ParsePDFOptions) plus what
// the caller knows; the zero value keeps the template's.
type PDFOptions struct {
	pdfa      *pdfaLevel // nil: the schema's; pdfaLevel{} turns it off
	watermark *watermark // nil: the schema's
	metadata  *requestMetadata
	encrypt   *Encryption
	einvoice  *einvoiceRequest // nil: the schema's profile
	// attachBefore and attachAfter are asset references (nil: the
	// schema's); countAttached nil keeps the schema's countAttachedPages.
	attachBefore, attachAfter *[]string
	countAttached             *bool
	sign                      *Signature // nil: the schema's
	// Draft stamps "DRAFT" on every page unless the template or the
	// request sets a watermark (previews).
	Draft bool
}

// Encryption is a request's encrypt option.
type Encryption struct {
	UserPassword, OwnerPassword string
	// Permissions are fpdf permission bits (print, copy, modify).
	Permissions uint32
}

// EInvoiceRequested reports whether the request chose an e-invoice profile.
func (o PDFOptions) EInvoiceRequested() bool { return o.einvoice != nil && !o.einvoice.off }

// Encrypted reports whether the options encrypt the document.
func (o PDFOptions) Encrypted() bool { return o.encrypt != nil }

// PDFOnly reports whether the options apply only to PDF output (pdfa,
// watermark, encrypt): an XLSX request with them is refused.
func (o PDFOptions) PDFOnly() string {
	switch {
	case o.encrypt != nil:
		return "encrypt"
	case o.pdfa != nil && o.pdfa.part != 0:
		return "pdfa"
	case o.watermark != nil && !o.watermark.off:
		return "watermark"
	case o.attachBefore != nil && len(*o.attachBefore) > 0:
		return "attachBefore"
	case o.attachAfter != nil && len(*o.attachAfter) > 0:
		return "attachAfter"
	case o.sign != nil && !o.sign.off:
		return "sign"
	}
	return ""
}

// pdfaLevel is a PDF/A part (2 or 3) and conformance ('B' or 'U'); part 0 is none.
type pdfaLevel struct {
	part        int
	conformance byte
}

func (l pdfaLevel) String() string {
	if l.part == 0 {
		return "none"
	}
	return fmt.Sprintf("%d%c", l.part, l.conformance+'a'-'A')
}

// requestMetadata is a request's documentMetadata: plain text, no placeholders.
type requestMetadata struct {
	title, author, subject, keywords, language *string
	created, modified                          time.Time
}

// businessOptions are the schema's pdfa and watermark.
type businessOptions struct {
	pdfa      pdfaLevel
	watermark *watermark
	attach    attachments
	sign      *Signature
	// encryptRequired: the schema's encrypt {"required": true}; every
	// request for a PDF must send its own encrypt (passwords are never
	// stored with a template).
	encryptRequired bool
}

// business is what one render applies: the schema's options with the
// request's over them.
type business struct {
	pdfa      pdfaLevel
	watermark *watermark
	encrypt   *Encryption
	modified  time.Time
	einvoice  einvoiceRun // the e-invoice profile in force and, once built, its XML
	attach    attachments
	// attached are the attachments read for this render (merge.go).
	attached *attached
}

// parseBusiness reads the schema's pdfa and watermark; encrypt is
// refused there (passwords are never stored).
func (c *compiler) parseBusiness(o object) businessOptions {
	var b businessOptions
	if o.present("pdfa") {
		if l := c.parsePDFA("schema.pdfa", o.raw("pdfa"), false); l != nil {
			b.pdfa = *l
		}
	}
	if o.present("watermark") {
		b.watermark = c.parseWatermark("schema.watermark", o.raw("watermark"))
	}
	if o.present("sign") {
		b.sign = c.parseSign("schema.sign", o.raw("sign"), false)
	}
	if o.present("encrypt") {
		b.encryptRequired = c.parseEncryptRequired(o.raw("encrypt"))
	}
	b.attach = c.parseAttachments("schema", o)
	return b
}

// parseEncryptRequired reads the schema's encrypt, which may only say
// {"required": true}: a template can demand encryption, never hold the
// passwords.
func (c *compiler) parseEncryptRequired(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil {
		c.add("schema.encrypt", `must be {"required": true}: passwords are set per request only, never stored with a template`)
		return false
	}
	for k := range v {
		if k != "required" {
			c.add("schema.encrypt."+k, `is set per request only: passwords are never stored with a template (the schema's encrypt may only say {"required": true})`)
		}
	}
	var required bool
	if r, ok := v["required"]; ok {
		if err := json.Unmarshal(r, &required); err != nil {
			c.add("schema.encrypt.required", "must be true or false")
		}
	}
	return required
}

func (c *compiler) parsePDFA(path string, raw json.RawMessage, request bool) *pdfaLevel {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		c.add(path, `must be one of "2b", "3b", "2u", "3u"`)
		return nil
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "2b":
		return &pdfaLevel{2, 'B'}
	case "3b":
		return &pdfaLevel{3, 'B'}
	case "2u":
		return &pdfaLevel{2, 'U'}
	case "3u":
		return &pdfaLevel{3, 'U'}
	case "none":
		if request {
			return &pdfaLevel{}
		}
	}
	more := ""
	if request {
		more = `, or "none"`
	}
	c.add(path, `must be one of "2b", "3b", "2u", "3u"%s (PDF/A-1 and "a" conformance are not offered)`, more)
	return nil
}

// ParsePDFOptions checks a request's business PDF options; problems are a
// *SchemaError whose paths are the request's fields (watermark.opacity).
func ParsePDFOptions(r PDFRequest) (PDFOptions, error) {
	var o PDFOptions
	if r.Empty() {
		return o, nil
	}
	limits := DefaultLimits()
	c := &compiler{limits: limits, exprs: newExprCompiler(limits)}
	if isNull(r.PDFA) {
		o.pdfa = c.parsePDFA("pdfa", r.PDFA, true)
	}
	if isNull(r.Watermark) {
		o.watermark = c.parseWatermark("watermark", r.Watermark)
	}
	if isNull(r.Encrypt) {
		o.encrypt = c.parseEncrypt("encrypt", r.Encrypt)
	}
	if isNull(r.DocumentMetadata) {
		o.metadata = c.parseRequestMetadata("documentMetadata", r.DocumentMetadata)
	}
	if isNull(r.EInvoice) {
		o.einvoice = c.parseEInvoiceRequest("einvoice", r.EInvoice)
	}
	c.parseRequestAttachments(r, &o)
	if isNull(r.Sign) {
		o.sign = c.parseSign("sign", r.Sign, true)
	}
	if o.encrypt != nil && o.sign != nil && !o.sign.off {
		c.add("sign", "cannot be combined with encrypt: sign or encrypt, not both (docs/templates.md, Signatures)")
	}
	if o.encrypt != nil && o.pdfa != nil && o.pdfa.part != 0 {
		c.add("encrypt", "cannot be combined with pdfa: PDF/A forbids encryption")
	}
	for _, is := range c.unknownKeys() {
		c.add(is.Path, "unknown key%s", strings.TrimPrefix(is.Message, "unknown key, ignored"))
	}
	if err := c.err(); err != nil {
		return PDFOptions{}, err
	}
	return o, nil
}

// isNull reports whether raw holds a value other than JSON null.
func isNull(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) > 0 && string(s) != "null"
}

// maxPassword is the most of a password revision 6 reads (bytes of UTF-8,
// after SASLprep).
const maxPassword = 127

func (c *compiler) parseEncrypt(path string, raw json.RawMessage) *Encryption {
	o, ok := c.object(path, raw)
	if !ok {
		return nil
	}
	e := &Encryption{Permissions: fpdf.PermPrint | fpdf.PermCopy | fpdf.PermModify}
	for _, f := range []struct {
		key string
		dst *string
	}{{"userPassword", &e.UserPassword}, {"ownerPassword", &e.OwnerPassword}} {
		if s, ok := c.str(o, path, f.key); ok {
			p, err := saslprep(s)
			if err != nil {
				c.add(path+"."+f.key, "%s", err.Error())
				continue
			}
			if len(p) > maxPassword {
				c.add(path+"."+f.key, "is %d bytes long once prepared (SASLprep), at most %d", len(p), maxPassword)
			}
			*f.dst = p
		}
	}
	if e.UserPassword == "" && e.OwnerPassword == "" {
		c.add(path, "needs userPassword (to open the document) or ownerPassword (to change its permissions), or both")
	}
	if alg, ok := c.str(o, path, "algorithm"); ok && !strings.EqualFold(alg, "aes-256") {
		c.add(path+".algorithm", `must be "aes-256": RC4 and AES-128 are not offered`)
	}
	if o.present("permissions") {
		list, ok := c.array(path+".permissions", o.raw("permissions"))
		if ok {
			e.Permissions = 0
			for i, item := range list {
				var s string
				p := fmt.Sprintf("%s.permissions[%d]", path, i)
				if err := json.Unmarshal(item, &s); err != nil {
					c.add(p, `must be "print", "copy" or "modify"`)
					continue
				}
				switch strings.ToLower(s) {
				case "print":
					e.Permissions |= fpdf.PermPrint
				case "copy":
					e.Permissions |= fpdf.PermCopy
				case "modify":
					e.Permissions |= fpdf.PermModify
				default:
					c.add(p, `must be "print", "copy" or "modify"`)
				}
			}
		}
	}
	return e
}

// maxMetadataText bounds each documentMetadata text.
const maxMetadataText = 1000

func (c *compiler) parseRequestMetadata(path string, raw json.RawMessage) *requestMetadata {
	o, ok := c.object(path, raw)
	if !ok {
		return nil
	}
	m := &requestMetadata{}
	for _, f := range []struct {
		key string
		dst **string
	}{{"title", &m.title}, {"author", &m.author}, {"subject", &m.subject}, {"keywords", &m.keywords}, {"language", &m.language}} {
		s, ok := c.str(o, path, f.key)
		if !ok {
			continue
		}
		if utf8.RuneCountInString(s) > maxMetadataText {
			c.add(path+"."+f.key, "is longer than %d characters", maxMetadataText)
			continue
		}
		if f.key == "language" && !languageTag.MatchString(s) {
			c.add(path+".language", "must be a language tag such as en or de-CH")
			continue
		}
		*f.dst = &s
	}
	for _, f := range []struct {
		key string
		dst *time.Time
	}{{"creationDate", &m.created}, {"modificationDate", &m.modified}} {
		if s, ok := c.str(o, path, f.key); ok {
			t, valid := parseDate(s)
			if !valid {
				c.add(path+"."+f.key, "must be a date (YYYY-MM-DD or RFC 3339)")
			}
			*f.dst = t
		}
	}
	return m
}

// EncryptRequired reports whether the template demands that every request
// for a PDF sends encrypt (schema "encrypt": {"required": true}).
func (t *Template) EncryptRequired() bool { return t.doc.business.encryptRequired }

// CheckPDFOptions reports what the request's options cannot do with this
// template: encrypting a template that asks for PDF/A, or leaving out the
// encryption a template requires (previews, o.Draft, are exempt: they are
// the editor's, not documents sent to anyone).
func (t *Template) CheckPDFOptions(o PDFOptions) error {
	if t.doc.business.encryptRequired && o.encrypt == nil && !o.Draft {
		return &SchemaError{Issues: []Issue{{Path: "encrypt", Message: "is required: the template asks for every document to be encrypted; send encrypt with a userPassword or ownerPassword"}}}
	}
	pdfa := t.doc.business.pdfa
	if o.pdfa != nil {
		pdfa = *o.pdfa
	}
	if o.encrypt != nil && pdfa.part != 0 {
		return &SchemaError{Issues: []Issue{{Path: "encrypt", Message: fmt.Sprintf("cannot be combined with PDF/A (the template asks for pdfa %q; send \"pdfa\": \"none\" to drop it): PDF/A forbids encryption", pdfa)}}}
	}
	if o.encrypt != nil && t.Signature(o) != nil {
		return signEncryptIssue()
	}
	return t.checkEInvoiceOptions(o)
}

// resolveBusiness puts the request's options over the schema's, into in.
func (t *Template) resolveBusiness(in *docInfo, o PDFOptions) error {
	if err := t.CheckPDFOptions(o); err != nil {
		return err
	}
	b := &in.biz
	b.pdfa = t.doc.business.pdfa
	if o.pdfa != nil {
		b.pdfa = *o.pdfa
	}
	b.watermark = t.doc.business.watermark
	if o.watermark != nil {
		b.watermark = o.watermark
	}
	if o.Draft && b.watermark == nil {
		b.watermark = draftWatermark
	}
	b.encrypt = o.encrypt
	b.einvoice = einvoiceRun{profile: t.EInvoiceProfile(o)}
	if facturX(b.einvoice.profile) && b.pdfa.part != 3 {
		b.pdfa = pdfaLevel{3, 'B'} // Factur-X is a PDF/A-3 with the XML inside
	}
	b.attach = t.doc.business.attach.over(o)
	if m := o.metadata; m != nil {
		for _, f := range []struct {
			src *string
			dst *string
		}{{m.title, &in.title}, {m.author, &in.author}, {m.subject, &in.subject}, {m.keywords, &in.keywords}, {m.language, &in.language}} {
			if f.src != nil {
				*f.dst = *f.src
			}
		}
		if !m.created.IsZero() {
			in.created = m.created
		}
		b.modified = m.modified
	}
	if b.modified.IsZero() || b.modified.Before(in.created) {
		b.modified = in.created
	}
	return nil
}

// applyBusiness writes the document's XMP packet, ID, PDF/A output intent
// and encryption settings; called before the first page.
func (p *pdfWriter) applyBusiness(in docInfo) error {
	b := in.biz
	p.wm = b.watermark
	p.f.SetXmpMetadata(xmpPacket(in))
	// The trailer ID is the hash of the document's body (fpdf): the same
	// template and values give the same bytes.
	if b.pdfa.part != 0 {
		p.f.SetPDFA(icc.SRGB, "sRGB IEC61966-2.1")
	}
	if x := b.einvoice; facturX(x.profile) && len(x.xml) > 0 {
		p.f.SetAssociatedFile(fpdf.AssociatedFile{Name: facturXName, MIME: "text/xml", Relationship: "Data",
			Description: "Factur-X invoice", Content: x.xml, Modified: b.modified})
	}
	if e := b.encrypt; e != nil {
		if err := p.f.SetEncryptionAES256(e.UserPassword, e.OwnerPassword, e.Permissions|fpdf.PermAccessibility, rand.Reader); err != nil {
			return fmt.Errorf("render: encrypting: %w", err)
		}
	}
	return nil
}

// xmpPacket is the document's XMP metadata: the Info dictionary's entries
// with the same values (PDF/A requires them to agree), and the PDF/A
// identification when one is asked for.
func xmpPacket(in docInfo) []byte {
	var b bytes.Buffer
	b.WriteString("<?xpacket begin=\"\xef\xbb\xbf\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n")
	b.WriteString(`<x:xmpmeta xmlns:x="adobe:ns:meta/">` + "\n")
	b.WriteString(`<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` + "\n")
	b.WriteString(`<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:pdf="http://ns.adobe.com/pdf/1.3/"`)
	if in.biz.pdfa.part != 0 {
		b.WriteString(` xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"`)
	}
	b.WriteString(">\n")
	if l := in.biz.pdfa; l.part != 0 {
		fmt.Fprintf(&b, "<pdfaid:part>%d</pdfaid:part>\n<pdfaid:conformance>%c</pdfaid:conformance>\n", l.part, l.conformance)
	}
	b.WriteString("<dc:format>application/pdf</dc:format>\n")
	if in.title != "" {
		b.WriteString(`<dc:title><rdf:Alt><rdf:li xml:lang="x-default">` + xmlText(in.title) + "</rdf:li></rdf:Alt></dc:title>\n")
	}
	if in.author != "" {
		b.WriteString("<dc:creator><rdf:Seq><rdf:li>" + xmlText(in.author) + "</rdf:li></rdf:Seq></dc:creator>\n")
	}
	if in.subject != "" {
		b.WriteString(`<dc:description><rdf:Alt><rdf:li xml:lang="x-default">` + xmlText(in.subject) + "</rdf:li></rdf:Alt></dc:description>\n")
	}
	if in.language != "" {
		b.WriteString("<dc:language><rdf:Bag><rdf:li>" + xmlText(in.language) + "</rdf:li></rdf:Bag></dc:language>\n")
	}
	if in.keywords != "" {
		b.WriteString("<pdf:Keywords>" + xmlText(in.keywords) + "</pdf:Keywords>\n")
	}
	b.WriteString("<pdf:Producer>Folio</pdf:Producer>\n<xmp:CreatorTool>Folio</xmp:CreatorTool>\n")
	const layout = "2006-01-02T15:04:05Z07:00"
	created, modified := in.created.Truncate(time.Second), in.biz.modified.Truncate(time.Second)
	fmt.Fprintf(&b, "<xmp:CreateDate>%s</xmp:CreateDate>\n<xmp:ModifyDate>%s</xmp:ModifyDate>\n<xmp:MetadataDate>%s</xmp:MetadataDate>\n",
		created.Format(layout), modified.Format(layout), modified.Format(layout))
	b.WriteString("</rdf:Description>\n")
	writeFacturXXMP(&b, in.biz.einvoice)
	b.WriteString("</rdf:RDF>\n</x:xmpmeta>\n")
	// No padding for in-place edits: every PDF carries the packet, and
	// Folio never edits one in place.
	b.WriteString(`<?xpacket end="r"?>`)
	return b.Bytes()
}

// xmlText escapes s for XML and drops characters XML 1.0 cannot hold.
func xmlText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r < 0xD800 || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF:
			b.WriteRune(r)
		}
	}
	return b.String()
}
