// Package client is a small Go client for Folio's HTTP API, used by the
// bench command and usable by integrators.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client calls one Folio server with one bearer token (API key or JWT).
type Client struct {
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// New returns a client; caPEM (optional) is trusted in addition to the
// system roots, e.g. the server's self-signed folio-data/tls/cert.pem.
func New(baseURL, token string, caPEM []byte) (*Client, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if len(caPEM) > 0 && !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("client: no certificate in the CA PEM")
	}
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   false, // HTTP/1.1 keep-alive: one connection per concurrent client
	}
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Token: token, HTTP: &http.Client{Transport: tr, Timeout: 2 * time.Minute}}, nil
}

// WithToken returns a copy of c using another token.
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.Token = token
	return &cp
}

// Error is an API error envelope.
type Error struct {
	StatusCode  int            `json:"statusCode"`
	Code        string         `json:"code"`
	Message     string         `json:"message"`
	Path        string         `json:"path"`
	RelatedInfo map[string]any `json:"relatedInfo"`
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.StatusCode, e.Code, e.Message) }

// Do sends method path with body (marshalled as JSON unless nil) and decodes
// a 2xx JSON answer into out (when not nil). Other answers return *Error.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if raw, ok := body.(json.RawMessage); ok {
		rd = bytes.NewReader(raw) // encoded once by the caller (the bench's requests)
	} else if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := readAll(res)
	if err != nil {
		return err
	}
	if res.StatusCode/100 != 2 {
		e := &Error{StatusCode: res.StatusCode}
		if json.Unmarshal(raw, e) != nil || e.Code == "" {
			e.Message = strings.TrimSpace(string(raw))
		}
		return e
	}
	if out != nil && len(raw) > 0 {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// readAll reads an answer's body into a buffer of its announced length
// (io.ReadAll starts at 512 bytes and grows: two or three allocations for
// a job's answer).
func readAll(res *http.Response) ([]byte, error) {
	n := res.ContentLength
	if n < 0 || n > 1<<20 {
		return io.ReadAll(res.Body)
	}
	buf := make([]byte, n, n+1)
	if _, err := io.ReadFull(res.Body, buf); err != nil {
		return nil, err
	}
	// The end of the body: nothing may follow what was announced.
	if m, err := res.Body.Read(buf[n : n+1]); m > 0 || err != nil && err != io.EOF {
		if err == nil {
			err = fmt.Errorf("client: body longer than its Content-Length %d", n)
		}
		return nil, err
	}
	return buf, nil
}

// Session is the answer of signup and login.
type Session struct {
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
	User         struct {
		ID    string `json:"id"`
		Email string `json:"email"`
	} `json:"user"`
}

// Signup creates an account.
func (c *Client) Signup(ctx context.Context, email, password, name string) (*Session, error) {
	var s Session
	return &s, c.Do(ctx, "POST", "/api/auth/signup", map[string]string{"email": email, "password": password, "name": name}, &s)
}

// Login signs in.
func (c *Client) Login(ctx context.Context, email, password string) (*Session, error) {
	var s Session
	return &s, c.Do(ctx, "POST", "/api/auth/login", map[string]string{"email": email, "password": password}, &s)
}

// CreateKey creates an API key (JWT client) and returns its plain text.
func (c *Client) CreateKey(ctx context.Context, name string) (string, error) {
	var k struct {
		PlainKey string `json:"plainKey"`
	}
	err := c.Do(ctx, "POST", "/api/api-keys", map[string]any{"name": name}, &k)
	return k.PlainKey, err
}

// CreateTemplate stores a template definition (the body of POST
// /api/templates) and returns its id.
func (c *Client) CreateTemplate(ctx context.Context, def any) (string, error) {
	var t struct {
		ID string `json:"id"`
	}
	err := c.Do(ctx, "POST", "/api/templates", def, &t)
	return t.ID, err
}

// Job is the job object.
type Job struct {
	JobID       string    `json:"jobId"`
	Status      string    `json:"status"`
	Format      string    `json:"format"`
	TemplateID  string    `json:"templateId"`
	DownloadURL string    `json:"downloadUrl"`
	ExpiresAt   time.Time `json:"expiresAt"`
	Error       string    `json:"error"`
	ErrorCode   string    `json:"errorCode"`
}

// Generate renders one document (waits up to 30 s unless async).
func (c *Client) Generate(ctx context.Context, templateID, format string, variables any, async bool) (*Job, error) {
	path := "/api/v1/documents/generate"
	if async {
		path += "?async=true"
	}
	var j Job
	err := c.Do(ctx, "POST", path, map[string]any{"templateId": templateID, "format": format, "variables": variables}, &j)
	return &j, err
}

// Batch is the batch object.
type Batch struct {
	BatchID            string `json:"batchId"`
	Status             string `json:"status"`
	TotalDocuments     int    `json:"totalDocuments"`
	CompletedDocuments int    `json:"completedDocuments"`
	FailedDocuments    int    `json:"failedDocuments"`
	Documents          []Job  `json:"documents"`
}

// GenerateBatch queues a batch; variables holds one object per document.
func (c *Client) GenerateBatch(ctx context.Context, templateID, format string, variables []any) (*Batch, error) {
	docs := make([]map[string]any, len(variables))
	for i, v := range variables {
		docs[i] = map[string]any{"variables": v}
	}
	var b Batch
	err := c.Do(ctx, "POST", "/api/v1/documents/generate/batch", map[string]any{"templateId": templateID, "format": format, "documents": docs}, &b)
	return &b, err
}

// WaitBatch polls a batch every interval until it ends or ctx ends. Each
// poll sends the last answer's ETag: an unchanged batch answers 304 and
// no body.
func (c *Client) WaitBatch(ctx context.Context, id string, interval time.Duration) (*Batch, error) {
	return c.waitBatch(ctx, id, interval, true)
}

// waitBatch is WaitBatch, with conditional polls or without.
func (c *Client) waitBatch(ctx context.Context, id string, interval time.Duration, conditional bool) (*Batch, error) {
	var b *Batch
	etag := ""
	for {
		req, err := http.NewRequestWithContext(ctx, "GET", c.BaseURL+"/api/v1/documents/batches/"+id, nil)
		if err != nil {
			return nil, err
		}
		if c.Token != "" {
			req.Header.Set("Authorization", "Bearer "+c.Token)
		}
		if conditional && etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		res, err := c.HTTP.Do(req)
		if err != nil {
			return nil, err
		}
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		switch {
		case err != nil:
			return nil, err
		case res.StatusCode == http.StatusNotModified && b != nil:
		case res.StatusCode == http.StatusOK:
			b = &Batch{}
			if err := json.Unmarshal(raw, b); err != nil {
				return nil, err
			}
			etag = res.Header.Get("ETag")
		default:
			e := &Error{StatusCode: res.StatusCode}
			if json.Unmarshal(raw, e) != nil || e.Code == "" {
				e.Message = strings.TrimSpace(string(raw))
			}
			return nil, e
		}
		if b.Status != "processing" {
			return b, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// Download fetches a signed link.
func (c *Client) Download(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return nil, fmt.Errorf("download: %s", res.Status)
	}
	return io.ReadAll(res.Body)
}

func newRequest(ctx context.Context, c *Client, method, path string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return req, nil
}
