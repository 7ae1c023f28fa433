package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"folio/render"
)

// Business PDF options of a request (issue 23): pdfa, watermark,
// documentMetadata and encrypt, over the template's. A job records them
// without the passwords; those live only in this process's memory until
// the job ends (pdfSecrets), so they never reach a job row, a log line or
// a webhook.

// jobPDFOptions is what a job row keeps of a request's options.
type jobPDFOptions struct {
	render.PDFRequest
	// Encrypted records that the request asked for encryption; the
	// passwords are not kept.
	Encrypted bool `json:"encrypted,omitempty"`
}

// pdfOptions checks a request's options for a render of ct in format.
// Problems are ERR_VALID_003 naming the first field, with every one of
// them in relatedInfo.errors.
func pdfOptions(r render.PDFRequest, format string, ct *render.Template) (render.PDFOptions, error) {
	return checkPDFOptions(r, format, ct, false)
}

// previewPDFOptions is pdfOptions for a preview: stamped DRAFT, and not
// held to a template's required encryption (the editor's, sent to no one).
func previewPDFOptions(r render.PDFRequest, format string, ct *render.Template) (render.PDFOptions, error) {
	return checkPDFOptions(r, format, ct, true)
}

func checkPDFOptions(r render.PDFRequest, format string, ct *render.Template, draft bool) (render.PDFOptions, error) {
	o, err := render.ParsePDFOptions(r)
	o.Draft = draft
	if err == nil {
		if f := o.PDFOnly(); f != "" && format != string(render.PDF) {
			return o, ErrInvalid(f, "%s applies to PDF documents only, not %s", f, format)
		}
		err = ct.CheckPDFOptions(o)
	}
	if err != nil {
		return o, optionError(err)
	}
	return o, checkEInvoiceFormat(o, format, ct)
}

// checkEInvoiceFormat refuses an e-invoice the format cannot deliver:
// format xml needs a profile; a request for an XRechnung or UBL invoice
// is answered in xml (a template whose own profile is one of them still
// renders its PDF, checked against the profile's rules).
func checkEInvoiceFormat(o render.PDFOptions, format string, ct *render.Template) error {
	profile := ct.EInvoiceProfile(o)
	switch {
	case format == string(render.XML) && profile == "":
		return ErrInvalid("format", "format xml is the e-invoice alone: the template's schema or the request's einvoice must choose a profile (%s)",
			strings.Join([]string{render.ProfileFacturXEN16931, render.ProfileFacturXBasic, render.ProfileXRechnungCII, render.ProfileUBL}, ", "))
	case format == string(render.PDF) && o.EInvoiceRequested() && render.ProfileDeliversXML(profile):
		return ErrInvalid("einvoice.profile", "the %s e-invoice is an XML document: send \"format\": \"xml\" (a Factur-X profile embeds the XML in the PDF)", profile)
	case format == string(render.XLSX) && o.EInvoiceRequested():
		return ErrInvalid("einvoice", "an e-invoice is a PDF (Factur-X) or XML document, not xlsx")
	}
	return nil
}

// eInvoiceError turns the rules an e-invoice breaks into ERR_EINVOICE_001,
// naming the first rule and the mapping's field and expression.
func eInvoiceError(e *render.EInvoiceError) *Error {
	v := e.Violations[0]
	return (&Error{Code: ECodeEInvoice, Message: e.Error()}).WithInfo("rule", v.Rule, "field", v.Field, "expression", v.Expression,
		"term", v.Term, "profile", e.Profile, "violations", e.Violations)
}

// optionError turns a *render.SchemaError about request options into ERR_VALID_003.
func optionError(err error) error {
	var se *render.SchemaError
	if !errors.As(err, &se) || len(se.Issues) == 0 {
		return err
	}
	first := se.Issues[0]
	return (&Error{Code: ECodeInvalidField, Message: first.Path + ": " + first.Message}).WithInfo("field", first.Path, "errors", se.Issues)
}

// storedPDFOptions is the JSON a job row keeps: the options without the
// passwords; nil when the request set none.
func storedPDFOptions(r render.PDFRequest) json.RawMessage {
	if r.Empty() {
		return nil
	}
	b, _ := json.Marshal(jobPDFOptions{PDFRequest: r.Stored(), Encrypted: len(r.Encrypt) > 0})
	return b
}

// keepSecrets holds a job's checked options in memory when they encrypt,
// for its worker.
func (s *DocumentService) keepSecrets(jobID string, o render.PDFOptions) {
	if o.Encrypted() {
		s.pdfSecrets.Store(jobID, o)
	}
}

// jobPDFOptionsFor are the options a job renders with: its row's, with
// the passwords this process holds. A job whose passwords are gone (the
// server restarted before it ran, or it is retried) fails: it is never
// written unencrypted.
func (s *DocumentService) jobPDFOptionsFor(j *Job, ct *render.Template) (render.PDFOptions, *Error) {
	if held, ok := s.pdfSecrets.Load(j.ID); ok {
		return held.(render.PDFOptions), nil
	}
	if len(j.PDFOptions) == 0 {
		return render.PDFOptions{}, nil
	}
	var stored jobPDFOptions
	if err := json.Unmarshal(j.PDFOptions, &stored); err != nil {
		return render.PDFOptions{}, &Error{Code: ECodeRenderFailed, Message: "the job's PDF options cannot be read"}
	}
	if stored.Encrypted {
		return render.PDFOptions{}, (&Error{Code: ECodeRenderFailed, Message: "the document was to be encrypted, and its passwords are kept only in memory until the job runs: " +
			"they are gone (the server restarted, or the job is being retried); generate it again with its passwords"}).WithInfo("reason", "passwordsGone")
	}
	o, err := pdfOptions(stored.PDFRequest, j.Format, ct)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return o, e
		}
		return o, &Error{Code: ECodeRenderFailed, Message: err.Error()}
	}
	return o, nil
}

// pdfRequest is the options document i renders with: the batch's, with
// its own encrypt and documentMetadata over them.
func (in BatchInput) pdfRequest(d BatchDocument) render.PDFRequest {
	r := in.PDFRequest
	if len(d.Encrypt) > 0 {
		r.Encrypt = d.Encrypt
	}
	if len(d.DocumentMetadata) > 0 {
		r.DocumentMetadata = d.DocumentMetadata
	}
	return r
}

// batchPDFOptions checks document i's options; a problem with the
// document's own fields names documents[i].
func batchPDFOptions(in BatchInput, i int, d BatchDocument, ct *render.Template) (render.PDFOptions, error) {
	o, err := pdfOptions(in.pdfRequest(d), in.Format, ct)
	var e *Error
	if err != nil && errors.As(err, &e) && (len(d.Encrypt) > 0 || len(d.DocumentMetadata) > 0) {
		if f, ok := e.Info["field"].(string); ok && (strings.HasPrefix(f, "encrypt") && len(d.Encrypt) > 0 || strings.HasPrefix(f, "documentMetadata") && len(d.DocumentMetadata) > 0) {
			f = fmt.Sprintf("documents[%d].%s", i, f)
			return o, (&Error{Code: e.Code, Message: f + strings.TrimPrefix(e.Message, e.Info["field"].(string)), Info: e.Info}).WithInfo("field", f)
		}
	}
	return o, err
}

// signatureFor is the signature a render of ct in format with o asks
// for: PDFs only (an XLSX request with sign is refused by pdfOptions; a
// template's sign does not apply to its XLSX output).
func signatureFor(ct *render.Template, o render.PDFOptions, format string) *render.Signature {
	if format != string(render.PDF) {
		return nil
	}
	return ct.Signature(o)
}
