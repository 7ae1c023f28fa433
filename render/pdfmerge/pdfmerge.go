// Package pdfmerge reads existing PDF files and puts their pages before
// and after a generated document, combines documents into one file with a
// bookmark each, and encrypts the result. It is the one place Folio parses
// PDFs it did not write, through github.com/pdfcpu/pdfcpu, always under
// bounds (size, pages, objects, nesting, decoded bytes, time) and with
// any panic inside the library turned into an error.
package pdfmerge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/validate"
)

func init() {
	// pdfcpu would otherwise create a configuration directory in the
	// user's home; Folio configures it in code.
	model.ConfigPath = "disable"
}

// Bounds on a PDF Folio reads. An attached PDF is a cover or a few pages
// of terms; these are far above that and far below what could hurt.
const (
	MaxBytes   = 20 << 20 // the asset library's limit for a PDF
	MaxPages   = 500
	MaxObjects = 200_000
	MaxDepth   = 64 // nesting of arrays and dictionaries, and of the page tree
	// MaxTokens bounds the tokens (numbers, names, strings, keywords,
	// brackets) of all objects outside streams, counted (countTokens)
	// before pdfcpu parses them: each becomes a value of 50 to 100 bytes
	// in memory, and 8 million of them took pdfcpu 400 MB and 20 s of
	// CPU, from 16 KB of compressed object stream. The largest of the 47
	// real PDFs in pdfcpu's test data holds about 100,000 values.
	MaxTokens = 1_000_000
	// maxLazyBytes bounds the text of objects packed in object streams
	// that Folio parses (pdfcpu parses them only when asked): 20 MB of
	// compressed object streams may hold 128 MB of object text.
	maxLazyBytes = 32 << 20
	maxDecoded   = 128 << 20
	// ReadTimeout bounds reading one file, and Inspect's whole check.
	ReadTimeout = 10 * time.Second
)

// Info is what Inspect learns of a PDF.
type Info struct {
	Pages   int
	Version string // "1.7", "2.0"
	// PDFA is the PDF/A identification its XMP metadata claims ("2B",
	// "3U", "1A"...), or "" when it claims none.
	PDFA string
	// Title is the Info dictionary's title, if any.
	Title string
}

// Error is a reason a PDF cannot be used, written for the person who
// uploaded it.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

func refuse(format string, args ...any) error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// config is pdfcpu's configuration with Folio's bounds.
func config() *model.Configuration {
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	conf.Optimize = false
	conf.OptimizeBeforeWriting = false
	conf.OptimizeResourceDicts = false
	conf.CreateBookmarks = false
	conf.Offline = true
	conf.Limits.MaxStreamBytes = MaxBytes
	conf.Limits.MaxDecodeBytes = maxDecoded
	conf.Limits.MaxImageBytes = maxDecoded
	conf.Limits.MaxObjectCount = MaxObjects
	conf.Limits.MaxObjectStreamCount = MaxObjects
	conf.Limits.MaxXRefEntries = MaxObjects
	conf.Limits.MaxObjectStreamFirst = 1 << 20
	conf.Limits.MaxRecursionDepth = MaxDepth
	return conf
}

// read parses and validates data, refusing what Folio will not use:
// encrypted files, files beyond the bounds, files pdfcpu cannot read.
// Every step checks c, whose deadline bounds the whole read.
func read(c context.Context, data []byte, conf *model.Configuration) (ctx *model.Context, err error) {
	defer func() {
		if r := recover(); r != nil {
			ctx, err = nil, refuse("the PDF is damaged and cannot be read (%v)", clip(fmt.Sprint(r), 200))
		}
	}()
	if len(data) > MaxBytes {
		return nil, refuse("the PDF is %d bytes, more than %d", len(data), MaxBytes)
	}
	tokens := countTokens(data, MaxTokens)
	if tokens > MaxTokens {
		return nil, tooManyTokens()
	}
	ctx, err = pdfcpu.ReadWithContext(c, bytes.NewReader(data), conf)
	if err != nil {
		if errors.Is(err, pdfcpu.ErrWrongPassword) || strings.Contains(err.Error(), "password") {
			return nil, refuse("the PDF is encrypted (it needs a password to open): upload a copy without password protection")
		}
		if c.Err() != nil {
			return nil, tooLong()
		}
		return nil, refuse("the PDF cannot be read: %s", clip(err.Error(), 200))
	}
	if ctx.Encrypt != nil {
		return nil, refuse("the PDF is encrypted (it restricts what may be done with it): upload a copy without password protection")
	}
	if n := len(ctx.Table); n > MaxObjects {
		return nil, refuse("the PDF has %d objects, more than %d", n, MaxObjects)
	}
	if ctx.PageCount > MaxPages {
		return nil, refuse("the PDF has %d pages, more than %d", ctx.PageCount, MaxPages)
	}
	// Before anything looks at the objects: the ones packed in object
	// streams are otherwise left unparsed, unseen by checkActive, and
	// copied as they are into a merged file.
	if err := parseLazy(c, ctx, MaxTokens-tokens); err != nil {
		return nil, err
	}
	if err := checkActive(c, ctx); err != nil {
		return nil, err
	}
	if err := validate.XRefTable(ctx); err != nil {
		return nil, refuse("the PDF is not valid: %s", clip(err.Error(), 200))
	}
	if c.Err() != nil {
		return nil, tooLong()
	}
	if ctx.PageCount < 1 {
		return nil, refuse("the PDF has no pages")
	}
	if err := checkPageTree(ctx); err != nil {
		return nil, err
	}
	return ctx, nil
}

func tooLong() error {
	return refuse("the PDF took longer than %s to read", ReadTimeout)
}

func tooManyTokens() error {
	return refuse("the PDF holds more than %d values outside its streams", MaxTokens)
}

// parseLazy parses the objects pdfcpu read from object streams but left
// as text (types.LazyObjectStreamObject), at most maxLazyBytes of text
// and tokens tokens.
func parseLazy(c context.Context, ctx *model.Context, tokens int) error {
	text := 0
	for n, e := range ctx.Table {
		if e == nil || e.Free {
			continue
		}
		l, ok := e.Object.(types.LazyObjectStreamObject)
		if !ok {
			continue
		}
		if c.Err() != nil {
			return tooLong()
		}
		b, err := l.GetData()
		if err != nil {
			return refuse("the PDF's object %d cannot be read: %s", n, clip(err.Error(), 200))
		}
		if text += len(b); text > maxLazyBytes {
			return refuse("the PDF's object streams hold more than %d bytes of objects", maxLazyBytes)
		}
		if tokens -= countTokens(b, tokens); tokens < 0 {
			return tooManyTokens()
		}
		o, err := l.DecodedObject(c)
		if err != nil {
			if c.Err() != nil {
				return tooLong()
			}
			return refuse("the PDF's object %d cannot be read: %s", n, clip(err.Error(), 200))
		}
		e.Object = o
	}
	return nil
}

// activeActions are the action types a PDF merged into Folio's documents
// may not hold: they run code, open other files or programs, or send
// data.
var activeActions = map[string]string{
	"JavaScript": "JavaScript", "Launch": "an action that launches a program", "SubmitForm": "a form that submits data",
	"ImportData": "an action that imports data", "RichMediaExecute": "rich media commands", "GoToE": "an action that opens an embedded file",
	"Rendition": "a media rendition action", "Sound": "a sound action", "Movie": "a movie action",
}

// checkActive refuses a PDF with active content anywhere in its objects:
// JavaScript, launch, submit and import actions, rich media, embedded
// files, XFA forms. A merged document carries only pages, but a page's
// annotations come along, and these would come with them. An object it
// cannot see into (one left unparsed) is refused too.
func checkActive(c context.Context, ctx *model.Context) error {
	if c.Err() != nil {
		return tooLong()
	}
	var walk func(o types.Object, depth int) error
	walk = func(o types.Object, depth int) error {
		if depth > MaxDepth {
			return refuse("the PDF nests objects more than %d levels deep", MaxDepth)
		}
		switch v := o.(type) {
		case types.LazyObjectStreamObject:
			return refuse("the PDF holds an object Folio cannot read")
		case types.Dict:
			return walkDict(v, depth, walk)
		case types.StreamDict:
			return walkDict(v.Dict, depth, walk)
		case types.Array:
			for _, e := range v {
				if err := walk(e, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, e := range ctx.Table {
		if e == nil || e.Free || e.Object == nil {
			continue
		}
		if err := walk(e.Object, 0); err != nil {
			return err
		}
	}
	return nil
}

func walkDict(d types.Dict, depth int, walk func(types.Object, int) error) error {
	if s := d.NameEntry("S"); s != nil {
		if what, ok := activeActions[*s]; ok {
			return refuse("the PDF contains %s, which Folio does not merge into documents", what)
		}
	}
	if _, ok := d["JS"]; ok {
		return refuse("the PDF contains JavaScript, which Folio does not merge into documents")
	}
	if _, ok := d["XFA"]; ok {
		return refuse("the PDF contains an XFA form, which Folio does not merge into documents")
	}
	if t := d.Type(); t != nil && *t == "EmbeddedFile" {
		return refuse("the PDF contains embedded files, which Folio does not merge into documents: upload a copy without attachments")
	}
	if t := d.Subtype(); t != nil && (*t == "RichMedia" || *t == "Movie" || *t == "Sound" || *t == "Screen" || *t == "3D" || *t == "FileAttachment") {
		return refuse("the PDF contains a %s annotation, which Folio does not merge into documents", *t)
	}
	for _, v := range d {
		if err := walk(v, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// checkPageTree walks the page tree within MaxDepth and counts its leaves
// again, so a tree whose counts lie or whose kids loop is refused.
func checkPageTree(ctx *model.Context) error {
	root, err := ctx.Pages()
	if err != nil || root == nil {
		return refuse("the PDF has no page tree")
	}
	seen := map[int]bool{}
	var walk func(ref types.IndirectRef, depth int) (int, error)
	walk = func(ref types.IndirectRef, depth int) (int, error) {
		if depth > MaxDepth {
			return 0, refuse("the PDF's page tree is nested more than %d levels deep", MaxDepth)
		}
		n := ref.ObjectNumber.Value()
		if seen[n] {
			return 0, refuse("the PDF's page tree refers to object %d twice", n)
		}
		seen[n] = true
		d, err := ctx.DereferenceDict(ref)
		if err != nil || d == nil {
			return 0, refuse("the PDF's page tree is broken at object %d", n)
		}
		if t := d.Type(); t != nil && *t == "Page" {
			return 1, nil
		}
		kids := d.ArrayEntry("Kids")
		count := 0
		for _, k := range kids {
			kr, ok := k.(types.IndirectRef)
			if !ok {
				return 0, refuse("the PDF's page tree holds a page that is not an object reference")
			}
			c, err := walk(kr, depth+1)
			if err != nil {
				return 0, err
			}
			count += c
		}
		return count, nil
	}
	n, err := walk(*root, 0)
	if err != nil {
		return err
	}
	if n != ctx.PageCount {
		return refuse("the PDF's page tree holds %d pages but says %d", n, ctx.PageCount)
	}
	return nil
}

// Attachment is a PDF read for one merge (Open); it is used up by it.
type Attachment struct {
	Info
	ctx *model.Context
}

// Open parses and validates a PDF to attach, within the bounds.
func Open(data []byte) (a *Attachment, err error) {
	defer func() {
		if r := recover(); r != nil {
			a, err = nil, refuse("the PDF is damaged and cannot be read (%v)", clip(fmt.Sprint(r), 200))
		}
	}()
	c, cancel := context.WithTimeout(context.Background(), ReadTimeout)
	defer cancel()
	return open(c, data)
}

func open(c context.Context, data []byte) (*Attachment, error) {
	ctx, err := read(c, data, config())
	if err != nil {
		return nil, err
	}
	return &Attachment{Info: Info{Pages: ctx.PageCount, Version: ctx.VersionString(), PDFA: pdfaOf(ctx), Title: ctx.Title}, ctx: ctx}, nil
}

// Inspect parses and validates a PDF within the bounds, and merges it
// after a page of its own and writes the result once (discarding it), as
// a render will, so that a file Inspect accepts can be attached. The
// whole check takes at most about ReadTimeout.
func Inspect(data []byte) (info Info, err error) {
	defer func() {
		if r := recover(); r != nil {
			info, err = Info{}, refuse("the PDF is damaged and cannot be read (%v)", clip(fmt.Sprint(r), 200))
		}
	}()
	c, cancel := context.WithTimeout(context.Background(), ReadTimeout)
	defer cancel()
	a, err := open(c, data)
	if err != nil {
		return Info{}, err
	}
	// The trial merge's destination stands for the generated document.
	main, err := readOwn(trialPage)
	if err != nil {
		return Info{}, err
	}
	if err := appendDoc(main, a.take(), "trial"); err != nil {
		return Info{}, refuse("the PDF cannot be merged: %s", clip(err.Error(), 200))
	}
	if c.Err() != nil {
		return Info{}, tooLong()
	}
	if _, err := write(main, nil); err != nil {
		return Info{}, refuse("the PDF cannot be written again: %s", clip(err.Error(), 200))
	}
	if c.Err() != nil {
		return Info{}, tooLong()
	}
	return a.Info, nil
}

// trialPage is a one-page PDF, the destination of Inspect's trial merge.
var trialPage = func() []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << >> >>",
		"<< /Length 0 >>\nstream\n\nendstream",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}()

var (
	pdfaPart        = regexp.MustCompile(`pdfaid:part\s*(?:=\s*["']|>\s*)(\d)`)
	pdfaConformance = regexp.MustCompile(`pdfaid:conformance\s*(?:=\s*["']|>\s*)([A-Za-z])`)
)

// pdfaOf reads the PDF/A identification of the catalog's XMP metadata.
func pdfaOf(ctx *model.Context) string {
	root, err := ctx.Catalog()
	if err != nil {
		return ""
	}
	ref := root.IndirectRefEntry("Metadata")
	if ref == nil {
		return ""
	}
	sd, _, err := ctx.DereferenceStreamDict(*ref)
	if err != nil || sd == nil {
		return ""
	}
	if err := sd.Decode(); err != nil {
		return ""
	}
	xmp := sd.Content
	if len(xmp) > 1<<20 {
		xmp = xmp[:1<<20]
	}
	p := pdfaPart.FindSubmatch(xmp)
	if p == nil {
		return ""
	}
	c := pdfaConformance.FindSubmatch(xmp)
	if c == nil {
		return string(p[1])
	}
	return string(p[1]) + strings.ToUpper(string(c[1]))
}

// attachedKeys are the catalog entries of an attached PDF that are not
// carried into the merged document: only its pages (with their content,
// resources and annotations) are. The generated document's catalog is
// the merged one's.
var attachedKeys = []string{"Names", "Dests", "Outlines", "AcroForm", "OpenAction", "AA", "StructTreeRoot", "MarkInfo", "PageLabels", "Metadata", "OutputIntents", "AF", "Collection", "Threads", "Perms", "Legal", "Lang", "PageMode", "PageLayout", "ViewerPreferences", "OCProperties"}

// appendDoc appends src's pages to dest's page tree; only pages come along.
func appendDoc(dest, src *model.Context, name string) error {
	root, err := src.Catalog()
	if err != nil {
		return err
	}
	for _, k := range attachedKeys {
		delete(root, k)
	}
	if err := freeUnreachable(src); err != nil {
		return err
	}
	return pdfcpu.MergeXRefTables(name, src, dest, false, false)
}

// moveLastKid moves the page tree root's last kid (the pages just
// appended) to position at.
func moveLastKid(ctx *model.Context, at int) error {
	ref, err := ctx.Pages()
	if err != nil || ref == nil {
		return fmt.Errorf("pdfmerge: no page tree")
	}
	d, err := ctx.DereferenceDict(*ref)
	if err != nil || d == nil {
		return fmt.Errorf("pdfmerge: no page tree root")
	}
	kids := d.ArrayEntry("Kids")
	if at >= len(kids) {
		return fmt.Errorf("pdfmerge: page tree has %d kids", len(kids))
	}
	last := kids[len(kids)-1]
	copy(kids[at+1:], kids[at:len(kids)-1])
	kids[at] = last
	d["Kids"] = kids
	return nil
}

// Encryption is the standard security handler's AES-256 (revision 6)
// with these passwords and permission bits (PDF's P bits 3-12 as the
// render's fpdf writes them).
type Encryption struct {
	UserPassword, OwnerPassword string
	Permissions                 uint32
}

// write writes ctx, encrypted when enc is set, keeping the document
// information dictionary as it is and the header's version.
func write(ctx *model.Context, enc *Encryption) ([]byte, error) {
	version := ctx.HeaderVersion
	// pdfcpu stamps its own producer and the current time into the Info
	// dictionary of a PDF 1.x it writes, and writes AES-256 as revision 5
	// there; as PDF 2.0 it leaves Info alone and writes revision 6. The
	// header written is put back to the version read, below: the objects
	// pdfcpu writes are the same.
	v20 := model.V20
	ctx.HeaderVersion = &v20
	ctx.RootVersion = nil
	if enc != nil {
		ctx.Cmd = model.ENCRYPT
		ctx.EncryptUsingAES = true
		ctx.EncryptKeyLength = 256
		ctx.UserPW = enc.UserPassword
		ctx.OwnerPW = enc.OwnerPassword
		ctx.Permissions = model.PermissionFlags(0xF0C0 | (enc.Permissions & 0x0F3C))
	}
	var out bytes.Buffer
	if err := api.WriteContext(ctx, &out); err != nil {
		return nil, err
	}
	b := out.Bytes()
	if version != nil && *version != model.V20 && bytes.HasPrefix(b, []byte("%PDF-2.0")) {
		copy(b[5:8], version.String())
	}
	return b, nil
}

// freeUnreachable frees the objects of a PDF about to be merged that
// nothing refers to any more (its dropped catalog entries, old object and
// xref streams): pdfcpu would leave them out of the merged file's
// cross-reference table but count them in its /Size, which qpdf warns
// about. (Not for a destination: pdfcpu keeps name trees it has located
// in memory and links them only when writing.)
func freeUnreachable(ctx *model.Context) error {
	reached := map[int]bool{}
	var stack []types.Object
	if ctx.Root != nil {
		stack = append(stack, *ctx.Root)
	}
	if ctx.Info != nil {
		stack = append(stack, *ctx.Info)
	}
	for len(stack) > 0 {
		o := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch v := o.(type) {
		case types.IndirectRef:
			n := v.ObjectNumber.Value()
			if reached[n] {
				continue
			}
			reached[n] = true
			if e, ok := ctx.Table[n]; ok && e != nil && !e.Free && e.Object != nil {
				if _, lazy := e.Object.(types.LazyObjectStreamObject); lazy {
					// Still text in an object stream (a file read by readOwn):
					// parsed here, so what it refers to is kept.
					if _, err := ctx.Dereference(v); err != nil {
						return err
					}
				}
				stack = append(stack, e.Object)
			}
		case types.Dict:
			for _, x := range v {
				stack = append(stack, x)
			}
		case types.StreamDict:
			for _, x := range v.Dict {
				stack = append(stack, x)
			}
		case types.Array:
			stack = append(stack, v...)
		}
	}
	for n, e := range ctx.Table {
		if n == 0 || e == nil || e.Free || reached[n] {
			continue
		}
		if err := ctx.FreeObject(n); err != nil {
			return err
		}
	}
	return nil
}

// Merge puts the pages of before and after around the generated PDF's and
// returns the merged file, encrypted when enc is set. The generated
// document's catalog (metadata, outline, names and embedded files, output
// intents, language, associated files) and Info dictionary are the merged
// document's; the attached files bring their pages only.
func Merge(generated []byte, before, after []*Attachment, enc *Encryption) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("pdfmerge: internal error: %v", r)
		}
	}()
	dest, err := readOwn(generated)
	if err != nil {
		return nil, err
	}
	for i, a := range before {
		if err := appendDoc(dest, a.take(), fmt.Sprintf("before %d", i+1)); err != nil {
			return nil, fmt.Errorf("pdfmerge: %w", err)
		}
		if err := moveLastKid(dest, i); err != nil {
			return nil, err
		}
	}
	for i, a := range after {
		if err := appendDoc(dest, a.take(), fmt.Sprintf("after %d", i+1)); err != nil {
			return nil, fmt.Errorf("pdfmerge: %w", err)
		}
	}
	return write(dest, enc)
}

// take hands the parsed file to a merge, which changes it: an Attachment
// is merged once.
func (a *Attachment) take() *model.Context {
	ctx := a.ctx
	a.ctx = nil
	if ctx == nil {
		panic("pdfmerge: an attachment is merged once")
	}
	return ctx
}

// readOwn reads a PDF Folio wrote.
func readOwn(data []byte) (*model.Context, error) {
	conf := config()
	conf.Limits = model.DefaultResourceLimits()
	ctx, err := pdfcpu.ReadWithContext(context.Background(), bytes.NewReader(data), conf)
	if err != nil {
		return nil, fmt.Errorf("pdfmerge: reading the generated document: %w", err)
	}
	if ctx.Encrypt != nil {
		return nil, errors.New("pdfmerge: the generated document is encrypted; merge before encrypting")
	}
	if err := validate.XRefTable(ctx); err != nil {
		return nil, fmt.Errorf("pdfmerge: the generated document: %w", err)
	}
	return ctx, nil
}

// Document is one document of a combined file and its bookmark's title:
// Prefix and Title, or Prefix and the document's own title (its Info
// dictionary's) when Title is empty.
type Document struct {
	PDF           []byte
	Prefix, Title string
}

// title is d's bookmark title, ctx being d read.
func (d Document) title(ctx *model.Context) string {
	t := d.Title
	if t == "" {
		t = infoTitle(ctx)
	}
	return strings.TrimSpace(d.Prefix + t)
}

// infoTitle is the Title of ctx's Info dictionary.
func infoTitle(ctx *model.Context) string {
	if ctx.Info == nil {
		return ""
	}
	d, err := ctx.DereferenceDict(*ctx.Info)
	if err != nil || d == nil {
		return ""
	}
	o, err := ctx.Dereference(d["Title"])
	if err != nil || o == nil {
		return ""
	}
	switch v := o.(type) {
	case types.StringLiteral:
		s, err := types.StringLiteralToString(v)
		if err == nil {
			return s
		}
	case types.HexLiteral:
		s, err := types.HexLiteralToString(v)
		if err == nil {
			return s
		}
	}
	return ""
}

// Combine concatenates documents (PDFs Folio wrote) into one file with one
// top-level bookmark per document, titled as given, over each document's
// own bookmarks. The first document's catalog and Info are the file's.
func Combine(docs []Document) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("pdfmerge: internal error: %v", r)
		}
	}()
	if len(docs) == 0 {
		return nil, errors.New("pdfmerge: nothing to combine")
	}
	dest, err := readOwn(docs[0].PDF)
	if err != nil {
		return nil, err
	}
	dest.Configuration.CreateBookmarks = true
	dest.Configuration.MergeBookmarkMode = model.MergeBookmarkModeWrap
	if err := pdfcpu.EnsureOutlines(dest, docs[0].title(dest), false); err != nil {
		return nil, fmt.Errorf("pdfmerge: %w", err)
	}
	for _, d := range docs[1:] {
		src, err := readOwn(d.PDF)
		if err != nil {
			return nil, err
		}
		root, err := src.Catalog()
		if err != nil {
			return nil, err
		}
		// Each document's own outline comes along under its bookmark;
		// its names and metadata do not (the first document's are the file's).
		for _, k := range attachedKeys {
			if k != "Outlines" {
				delete(root, k)
			}
		}
		if err := freeUnreachable(src); err != nil {
			return nil, err
		}
		if err := pdfcpu.MergeXRefTables(d.title(src), src, dest, false, false); err != nil {
			return nil, fmt.Errorf("pdfmerge: %w", err)
		}
	}
	return write(dest, nil)
}

// Encrypt encrypts a PDF Folio wrote with AES-256 (revision 6).
func Encrypt(data []byte, enc Encryption) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("pdfmerge: internal error: %v", r)
		}
	}()
	ctx, err := readOwn(data)
	if err != nil {
		return nil, err
	}
	return write(ctx, &enc)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
