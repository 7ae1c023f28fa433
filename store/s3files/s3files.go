package s3files

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"folio/app"
)

var _ app.FileStore = (*Store)(nil)

// Store keeps files as objects named <prefix>/<name> in one bucket.
type Store struct {
	cfg    Config
	client *minio.Client
	core   minio.Core
	logger *slog.Logger
}

// Open makes a store for cfg. It does not contact the endpoint: Check does.
func Open(cfg *Config, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.Default()
	}
	tr, err := transport(cfg)
	if err != nil {
		return nil, err
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
		Secure:       cfg.TLS,
		Transport:    tr,
		Region:       cfg.Region,
		BucketLookup: lookup,
		// A request fails over to the caller soon: a download answers 503
		// and a job runs again later (app.DocumentService.retryLater)
		// rather than holding a worker through a long outage.
		MaxRetries: 2,
	})
	if err != nil {
		return nil, fmt.Errorf("--files-url: %w", err)
	}
	return &Store{cfg: *cfg, client: client, core: minio.Core{Client: client}, logger: logger}, nil
}

// transport is the HTTP transport to the endpoint: bounded dial and
// header waits, and the CA file's certificates trusted beside the system's.
func transport(cfg *Config) (*http.Transport, error) {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: DefaultTimeout,
		ExpectContinueTimeout: time.Second,
		// Objects are sent as stored; a transparent gzip would hide the
		// length that ranges and Content-Length depend on.
		DisableCompression: true,
	}
	if cfg.TLS {
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		if cfg.CAFile != "" {
			pem, err := os.ReadFile(cfg.CAFile)
			if err != nil {
				return nil, fmt.Errorf("--files-url ca: %w", err)
			}
			pool, err := x509.SystemCertPool()
			if err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--files-url ca: %s holds no PEM certificate", cfg.CAFile)
			}
			tr.TLSClientConfig.RootCAs = pool
		}
	}
	return tr, nil
}

// Check verifies that the bucket exists and the credentials may use it.
func (s *Store) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	ok, err := s.client.BucketExists(ctx, s.cfg.Bucket)
	switch code := minio.ToErrorResponse(err).Code; {
	case code == "AccessDenied" || code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch":
		return fmt.Errorf("--files-url: %s refused the credentials (%s); check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", s.cfg.Endpoint, code)
	case err != nil:
		return s.unavailable("check bucket", "", err)
	}
	if !ok {
		return fmt.Errorf("--files-url: bucket %q does not exist at %s", s.cfg.Bucket, s.cfg.Endpoint)
	}
	return nil
}

// key is the object key of a file name; names are the local store's
// (team/job.pdf, assets/..., avatars/...), checked the same way.
func (s *Store) key(name string) (string, error) {
	clean := path.Clean("/" + name)
	if clean == "/" || strings.Contains(name, "..") {
		return "", fmt.Errorf("invalid file name %q", name)
	}
	if s.cfg.Prefix == "" {
		return clean[1:], nil
	}
	return s.cfg.Prefix + clean, nil
}

// unavailable wraps a failure of the store as app.ErrFilesUnavailable (a
// 503, a job retried later), or fs.ErrNotExist for a missing object. The
// cause is logged here: the API shows only the envelope.
func (s *Store) unavailable(op, key string, err error) error {
	switch minio.ToErrorResponse(err).Code {
	case minio.NoSuchKey, "NotFound":
		return fmt.Errorf("s3 %s %s: %w", op, key, fs.ErrNotExist)
	}
	s.logger.Warn("file store unavailable", "op", op, "key", key, "endpoint", s.cfg.Endpoint, "err", err)
	return fmt.Errorf("%w: s3 %s %s: %w", app.ErrFilesUnavailable, op, key, err)
}

// WriteFile stores name. S3 makes a PUT, and the completion of a multipart
// upload, atomic: readers see the old object or the whole new one, never
// a part. Up to one part is buffered and sent in a single PUT; a larger
// file streams as a multipart upload of PartSize parts, so one write holds
// about two parts of memory whatever the file's size. A failed write
// (write's error, or the store's) leaves nothing: minio-go aborts the
// upload.
func (s *Store) WriteFile(name string, write func(w io.Writer) error) (int64, error) {
	key, err := s.key(name)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), WriteTimeout)
	defer cancel()
	w := &upload{s: s, ctx: ctx, key: key}
	if err := write(w); err != nil {
		w.abort(err)
		return 0, err
	}
	return w.finish()
}

// upload is a write in progress: buffered until it outgrows one part,
// then piped to a multipart upload.
type upload struct {
	s    *Store
	ctx  context.Context
	key  string
	buf  bytes.Buffer
	pw   *io.PipeWriter
	done chan struct{} // closed when the multipart upload returned
	size int64         // what it stored, once done
	err  error         // its error, once done
	n    int64
}

func (u *upload) Write(p []byte) (int, error) {
	if u.pw == nil && uint64(u.buf.Len()+len(p)) <= u.s.cfg.PartSize {
		u.n += int64(len(p))
		return u.buf.Write(p)
	}
	if u.pw == nil {
		pr, pw := io.Pipe()
		u.pw, u.done = pw, make(chan struct{})
		src := io.MultiReader(bytes.NewReader(u.buf.Bytes()), pr)
		go func() {
			defer close(u.done)
			info, err := u.s.client.PutObject(u.ctx, u.s.cfg.Bucket, u.key, src, -1, u.s.putOptions())
			u.size, u.err = info.Size, err
			pr.CloseWithError(errors.Join(err, io.ErrClosedPipe)) // unblocks the writer when the upload stopped early
		}()
	}
	n, err := u.pw.Write(p)
	u.n += int64(n)
	if err != nil {
		<-u.done
		if u.err != nil {
			return n, u.s.unavailable("put", u.key, u.err)
		}
	}
	return n, err
}

func (s *Store) putOptions() minio.PutObjectOptions {
	return minio.PutObjectOptions{PartSize: s.cfg.PartSize, NumThreads: 1, ContentType: "application/octet-stream"}
}

// abort ends a write whose producer failed; a started upload is aborted.
func (u *upload) abort(err error) {
	if u.pw != nil {
		u.pw.CloseWithError(err)
		<-u.done
	}
}

// finish completes the write and returns the stored size.
func (u *upload) finish() (int64, error) {
	if u.pw == nil {
		opts := u.s.putOptions()
		opts.DisableMultipart = true
		info, err := u.s.client.PutObject(u.ctx, u.s.cfg.Bucket, u.key, bytes.NewReader(u.buf.Bytes()), int64(u.buf.Len()), opts)
		if err != nil {
			return 0, u.s.unavailable("put", u.key, err)
		}
		return info.Size, nil
	}
	u.pw.Close()
	<-u.done
	if u.err != nil {
		return 0, u.s.unavailable("put", u.key, u.err)
	}
	if u.size != u.n {
		return 0, fmt.Errorf("s3 put %s: stored %d bytes of %d", u.key, u.size, u.n)
	}
	return u.size, nil
}

// OpenFile checks the object (HEAD) and returns a reader over it that
// fetches with ranged GETs. The check comes before any byte is sent, so a
// store that is down answers 503 instead of a partial download; the GETs
// require the same ETag, so a file replaced meanwhile is not mixed in.
func (s *Store) OpenFile(name string) (app.ReadSeekCloser, time.Time, error) {
	key, err := s.key(name)
	if err != nil {
		return nil, time.Time{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	info, err := s.client.StatObject(ctx, s.cfg.Bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return nil, time.Time{}, s.unavailable("stat", key, err)
	}
	return &object{s: s, key: key, size: info.Size, etag: info.ETag}, info.LastModified, nil
}

// object is an open stored object: io.ReadSeeker over ranged GETs. The
// body of one GET is read until a Seek moves elsewhere.
type object struct {
	s      *Store
	key    string
	size   int64
	etag   string
	pos    int64
	body   io.ReadCloser
	cancel context.CancelFunc
}

func (o *object) Read(p []byte) (int, error) {
	if o.pos >= o.size {
		return 0, io.EOF
	}
	if o.body == nil {
		if err := o.open(); err != nil {
			return 0, err
		}
	}
	n, err := o.body.Read(p)
	o.pos += int64(n)
	switch {
	case err == io.EOF && o.pos < o.size:
		// The object ended early: a broken stream, not the end.
		o.closeBody()
		return n, o.s.unavailable("get", o.key, io.ErrUnexpectedEOF)
	case err == io.EOF:
		return n, io.EOF
	case err != nil:
		o.closeBody()
		return n, o.s.unavailable("get", o.key, err)
	}
	return n, nil
}

// open starts a GET from pos to the end.
func (o *object) open() error {
	opts := minio.GetObjectOptions{}
	if o.etag != "" {
		if err := opts.SetMatchETag(o.etag); err != nil {
			return err
		}
	}
	if o.pos > 0 {
		if err := opts.SetRange(o.pos, 0); err != nil {
			return err
		}
	}
	// The body is read at the reader's pace (a slow client): only the
	// transport's header timeout bounds the request, Close ends it.
	ctx, cancel := context.WithCancel(context.Background())
	body, _, _, err := o.s.core.GetObject(ctx, o.s.cfg.Bucket, o.key, opts)
	if err != nil {
		cancel()
		return o.s.unavailable("get", o.key, err)
	}
	o.body, o.cancel = body, cancel
	return nil
}

func (o *object) closeBody() {
	if o.body != nil {
		o.body.Close()
		o.cancel()
		o.body, o.cancel = nil, nil
	}
}

func (o *object) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = o.pos + offset
	case io.SeekEnd:
		abs = o.size + offset
	default:
		return 0, errors.New("s3 object: invalid whence")
	}
	if abs < 0 {
		return 0, errors.New("s3 object: negative position")
	}
	if abs != o.pos {
		o.closeBody()
		o.pos = abs
	}
	return abs, nil
}

func (o *object) Close() error {
	o.closeBody()
	return nil
}

// RemoveFile deletes a stored file; a missing one is not an error (S3's
// DELETE succeeds for it).
func (s *Store) RemoveFile(name string) error {
	key, err := s.key(name)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	if err := s.client.RemoveObject(ctx, s.cfg.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
		if errors.Is(s.unavailable("delete", key, err), fs.ErrNotExist) {
			return nil
		}
		return s.unavailable("delete", key, err)
	}
	return nil
}

// staleUpload is how old an unfinished multipart upload must be before
// start-up aborts it: younger ones may belong to another replica's write
// in progress.
const staleUpload = 24 * time.Hour

// RemoveTempFiles aborts the multipart uploads under the prefix that a
// crash left unfinished a day or more ago (their parts cost storage but
// are invisible). It is best effort: a store that cannot be reached at
// start-up does not stop the server (documents wait for it), and a
// bucket lifecycle rule (AbortIncompleteMultipartUpload) does the same
// job; docs/deploy.md recommends one.
func (s *Store) RemoveTempFiles() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	prefix := ""
	if s.cfg.Prefix != "" {
		prefix = s.cfg.Prefix + "/"
	}
	n := 0
	for u := range s.client.ListIncompleteUploads(ctx, s.cfg.Bucket, prefix, true) {
		if u.Err != nil {
			s.logger.Warn("list unfinished uploads", "endpoint", s.cfg.Endpoint, "err", u.Err)
			return n, nil
		}
		if time.Since(u.Initiated) < staleUpload {
			continue
		}
		if err := s.core.AbortMultipartUpload(ctx, s.cfg.Bucket, u.Key, u.UploadID); err != nil {
			s.logger.Warn("abort unfinished upload", "key", u.Key, "err", err)
			continue
		}
		n++
	}
	return n, nil
}

// ListFiles returns the names of the stored files under dir ("" for all),
// as WriteFile named them. No part of the service lists files; tests and
// operators' tools do.
func (s *Store) ListFiles(ctx context.Context, dir string) ([]string, error) {
	prefix := ""
	if s.cfg.Prefix != "" {
		prefix = s.cfg.Prefix + "/"
	}
	if dir != "" {
		k, err := s.key(dir)
		if err != nil {
			return nil, err
		}
		prefix = k + "/"
	}
	var out []string
	for o := range s.client.ListObjects(ctx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, s.unavailable("list", prefix, o.Err)
		}
		name := o.Key
		if s.cfg.Prefix != "" {
			name = strings.TrimPrefix(name, s.cfg.Prefix+"/")
		}
		out = append(out, name)
	}
	return out, nil
}
