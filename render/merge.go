package render

import (
	"encoding/json"
	"fmt"
	"strings"

	"folio/render/internal/fpdf"
	"folio/render/pdfmerge"
)

// attachBefore and attachAfter (docs/templates.md, "Attaching PDFs"): the
// pages of PDF assets put before and after the generated pages, merged
// after layout by pdfmerge; countAttachedPages decides whether "page" and
// "pages" count them. Order of steps: layout (with watermark) → merge →
// encryption (pdfmerge.Merge encrypts the merged file; the fork encrypts
// only documents without attachments).

// maxAttachments bounds each of attachBefore and attachAfter.
const maxAttachments = 10

// attachments are the asset references of attachBefore and attachAfter
// ("asset:" stripped) and countAttachedPages.
type attachments struct {
	before, after []string
	count         bool
	// requestBefore and requestAfter mark lists the request sent: their
	// assets are the requesting team's (Options.RequestAssets).
	requestBefore, requestAfter bool
}

func (a attachments) empty() bool { return len(a.before) == 0 && len(a.after) == 0 }

// over puts a request's options over the schema's.
func (a attachments) over(o PDFOptions) attachments {
	if o.attachBefore != nil {
		a.before, a.requestBefore = *o.attachBefore, true
	}
	if o.attachAfter != nil {
		a.after, a.requestAfter = *o.attachAfter, true
	}
	if o.countAttached != nil {
		a.count = *o.countAttached
	}
	return a
}

// parseAttachments reads attachBefore, attachAfter and countAttachedPages
// of the schema.
func (c *compiler) parseAttachments(path string, o object) attachments {
	var a attachments
	if o.present("attachBefore") {
		a.before = c.parseAttachList(path+".attachBefore", o.raw("attachBefore"))
	}
	if o.present("attachAfter") {
		a.after = c.parseAttachList(path+".attachAfter", o.raw("attachAfter"))
	}
	if b, ok := c.boolean(o, path, "countAttachedPages"); ok {
		a.count = b
	}
	return a
}

// parseRequestAttachments reads a request's attachBefore, attachAfter and
// countAttachedPages into o.
func (c *compiler) parseRequestAttachments(r PDFRequest, o *PDFOptions) {
	if isNull(r.AttachBefore) {
		l := c.parseAttachList("attachBefore", r.AttachBefore)
		o.attachBefore = &l
	}
	if isNull(r.AttachAfter) {
		l := c.parseAttachList("attachAfter", r.AttachAfter)
		o.attachAfter = &l
	}
	if isNull(r.CountAttachedPages) {
		var b bool
		if err := json.Unmarshal(r.CountAttachedPages, &b); err != nil {
			c.add("countAttachedPages", "must be true or false")
		} else {
			o.countAttached = &b
		}
	}
}

// parseAttachList reads a list of "asset:<name or id>" strings.
func (c *compiler) parseAttachList(path string, raw json.RawMessage) []string {
	list, ok := c.array(path, raw)
	if !ok {
		return nil
	}
	if len(list) > maxAttachments {
		c.add(path, "lists %d PDFs, at most %d", len(list), maxAttachments)
		return nil
	}
	refs := []string{}
	for i, item := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		var s string
		if err := json.Unmarshal(item, &s); err != nil {
			c.add(p, `must be a string "asset:<name or id>" naming a PDF asset`)
			continue
		}
		ref, isAsset, err := assetRef(s)
		switch {
		case err != nil:
			c.add(p, "%v", err)
		case !isAsset:
			c.add(p, `must be "asset:<name or id>" naming a PDF asset (upload it to the asset library first), not %q`, clip(s, 64))
		default:
			refs = append(refs, ref)
		}
	}
	return refs
}

// AttachmentError is an attached PDF a render cannot use: it is not a
// PDF asset, cannot be read, or is not PDF/A when the document must be.
type AttachmentError struct {
	Path string // attachBefore[0]
	Ref  string // what follows "asset:"
	Msg  string
}

func (e *AttachmentError) Error() string {
	return fmt.Sprintf("%s (asset:%s): %s", e.Path, e.Ref, e.Msg)
}

// attached are the attachments of one render, read and counted.
type attached struct {
	before, after []*pdfmerge.Attachment
	// pagesBefore and pagesAfter are their page counts.
	pagesBefore, pagesAfter int
	bytes                   int64
}

// pageOffsets are what "page" adds to a generated page's number and what
// "pages" adds to their count.
func (b business) pageOffsets() (offset, extra int) {
	if b.attached == nil || !b.attach.count {
		return 0, 0
	}
	return b.attached.pagesBefore, b.attached.pagesBefore + b.attached.pagesAfter
}

// loadAttachments resolves and reads the render's attachments, before
// layout (their page counts are needed for "page" and "pages"). A
// PDF/A document takes only PDFs that claim PDF/A themselves.
func (in *docInfo) loadAttachments() error {
	a := in.biz.attach
	if a.empty() {
		return nil
	}
	at := &attached{}
	for _, side := range []struct {
		name    string
		refs    []string
		request bool
		dst     *[]*pdfmerge.Attachment
		pages   *int
	}{{"attachBefore", a.before, a.requestBefore, &at.before, &at.pagesBefore}, {"attachAfter", a.after, a.requestAfter, &at.after, &at.pagesAfter}} {
		resolve := in.assets
		if side.request && in.requestAssets != nil {
			resolve = in.requestAssets
		}
		for i, ref := range side.refs {
			path := fmt.Sprintf("%s[%d]", side.name, i)
			if resolve == nil {
				return &AttachmentError{path, ref, "assets are not available to this render"}
			}
			kind, data, err := resolve(ref)
			if err != nil {
				return err // the caller's error: a missing asset says so
			}
			if kind != "pdf" {
				return &AttachmentError{path, ref, fmt.Sprintf("is a %s asset, not a PDF", kind)}
			}
			doc, err := pdfmerge.Open(data)
			if err != nil {
				return &AttachmentError{path, ref, err.Error()}
			}
			if l := in.biz.pdfa; l.part != 0 && !claimsPDFA(doc.Info.PDFA) {
				return &AttachmentError{path, ref, fmt.Sprintf("the document is PDF/A-%s, and this PDF does not declare PDF/A conformance in its XMP metadata (pdfaid): attach a PDF/A file or send \"pdfa\": \"none\"", l)}
			}
			*side.dst = append(*side.dst, doc)
			*side.pages += doc.Info.Pages
			at.bytes += int64(len(data))
		}
	}
	in.biz.attached = at
	return nil
}

// claimsPDFA reports whether an attachment's pdfaid claims PDF/A-1, -2
// or -3 (any conformance level): pages conforming to those may be part of
// a PDF/A-2 or -3 document.
func claimsPDFA(id string) bool {
	return id != "" && strings.ContainsAny(id[:1], "123")
}

// mergeAttached puts the attachments around the generated PDF, and
// encrypts the result when the render asks for encryption.
func (in docInfo) mergeAttached(generated []byte) ([]byte, error) {
	at := in.biz.attached
	var enc *pdfmerge.Encryption
	if e := in.biz.encrypt; e != nil {
		enc = &pdfmerge.Encryption{UserPassword: e.UserPassword, OwnerPassword: e.OwnerPassword, Permissions: e.Permissions | fpdf.PermAccessibility}
	}
	out, err := pdfmerge.Merge(generated, at.before, at.after, enc)
	if err != nil {
		return nil, fmt.Errorf("render: merging attached PDFs: %w", err)
	}
	return out, nil
}
