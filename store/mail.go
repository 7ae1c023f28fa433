package store

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/smtp"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"folio/app"
)

// Outbox writes mail as .eml files into a directory (no SMTP configured).
type Outbox struct {
	Dir  string
	From string
	Now  func() time.Time
}

var _ app.Mailer = (*Outbox)(nil)

func message(from string, m app.Mail, now time.Time) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n%s",
		from, m.To, mime.QEncoding.Encode("utf-8", m.Subject), now.Format(time.RFC1123Z), m.Body)
	return []byte(b.String())
}

// Send writes the message atomically as <time>-<random>.eml.
func (o *Outbox) Send(_ context.Context, m app.Mail) error {
	if err := os.MkdirAll(o.Dir, privateDirMode); err != nil {
		return err
	}
	now := o.Now()
	name := fmt.Sprintf("%s-%s.eml", now.UTC().Format("20060102T150405.000000000"), app.RandomString(6))
	files := &Files{Root: o.Dir}
	_, err := files.WriteFile(name, func(w io.Writer) error {
		_, err := w.Write(message(o.From, m, now))
		return err
	})
	return err
}

// SMTP sends mail through an SMTP server given as smtp://user:pass@host:port.
type SMTP struct {
	URL  *url.URL
	From string
	Now  func() time.Time
}

// NewSMTP parses the --smtp-url value.
func NewSMTP(raw, from string, now func() time.Time) (*SMTP, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "smtp" || u.Host == "" {
		return nil, fmt.Errorf("--smtp-url must look like smtp://user:pass@host:port")
	}
	return &SMTP{URL: u, From: from, Now: now}, nil
}

// Send delivers the message (STARTTLS when the server offers it).
func (s *SMTP) Send(_ context.Context, m app.Mail) error {
	var auth smtp.Auth
	if s.URL.User != nil {
		pw, _ := s.URL.User.Password()
		auth = smtp.PlainAuth("", s.URL.User.Username(), pw, s.URL.Hostname())
	}
	return smtp.SendMail(s.URL.Host, auth, addr(s.From), []string{m.To}, message(s.From, m, s.Now()))
}

func addr(from string) string {
	if i := strings.LastIndexByte(from, '<'); i >= 0 {
		return strings.Trim(from[i:], "<>")
	}
	return from
}

// OutboxDir is where mail goes without SMTP.
func OutboxDir(data string) string { return filepath.Join(data, "mail") }
