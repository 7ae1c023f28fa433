// Package s3files keeps Folio's files (generated documents, assets,
// avatars) in an S3-compatible object store instead of the data
// directory: app.FileStore over github.com/minio/minio-go/v7. It is a
// package of its own so the embedded mode's binary path does not change:
// only `folio serve --files-url s3://...` uses it.
package s3files

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of a files URL's options.
const (
	// DefaultPartSize is the part of a multipart upload, and so the
	// memory one large write holds (twice: the part being filled and the
	// one being sent). A file that fits one part is sent in one PUT.
	DefaultPartSize = 8 << 20
	// minPartSize is S3's smallest part but the last.
	minPartSize = 5 << 20
	maxPartSize = 512 << 20
	// DefaultTimeout bounds a metadata request (HEAD, DELETE, the
	// opening of a GET); a write gets WriteTimeout.
	DefaultTimeout = 20 * time.Second
	WriteTimeout   = 10 * time.Minute
)

// Config is where and how the files are kept: the parsed --files-url plus
// the credentials from the environment.
type Config struct {
	Bucket   string
	Prefix   string // "" or a path without leading or trailing slash
	Endpoint string // host:port
	Region   string
	// TLS is on unless the URL says tls=false, which only a loopback
	// endpoint may (a test server, or a sidecar on the same host).
	TLS bool
	// CAFile is a PEM bundle trusted for the endpoint besides the system roots.
	CAFile string
	// PathStyle forces path-style requests (http://host/bucket/key); the
	// default lets the client choose (virtual-host style on AWS).
	PathStyle bool
	PartSize  uint64

	AccessKey, SecretKey, SessionToken string
}

// ParseURL reads a files URL:
//
//	s3://bucket/prefix?endpoint=host:port&region=eu-west-1&tls=false&ca=/etc/ca.pem&pathStyle=true&partSizeMB=16
//
// Credentials come from env (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// optionally AWS_SESSION_TOKEN), never from the URL: a URL is shown in
// process lists and logs.
func ParseURL(raw string, env func(string) string) (*Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("--files-url is not a URL") // the parse error would repeat the URL
	}
	if u.Scheme != "s3" {
		return nil, fmt.Errorf("--files-url: scheme %q is not supported; use s3://bucket/prefix?endpoint=host:port", u.Scheme)
	}
	if u.User != nil {
		return nil, errors.New("--files-url must not carry credentials; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment")
	}
	c := &Config{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/"), TLS: true, PartSize: DefaultPartSize}
	if c.Bucket == "" {
		return nil, errors.New("--files-url: the bucket is missing (s3://bucket/prefix)")
	}
	if strings.Contains(c.Prefix, "//") || strings.Contains(c.Prefix, "..") {
		return nil, fmt.Errorf("--files-url: prefix %q is not a clean path", c.Prefix)
	}
	q := u.Query()
	for k := range q {
		switch k {
		case "endpoint", "region", "tls", "ca", "pathStyle", "partSizeMB":
		default:
			return nil, fmt.Errorf("--files-url: unknown option %q (endpoint, region, tls, ca, pathStyle, partSizeMB)", k)
		}
	}
	c.Endpoint, c.Region, c.CAFile = q.Get("endpoint"), q.Get("region"), q.Get("ca")
	if c.Endpoint == "" {
		c.Endpoint = "s3.amazonaws.com"
		if c.Region != "" {
			c.Endpoint = "s3." + c.Region + ".amazonaws.com"
		}
	}
	if v := q.Get("tls"); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("--files-url: tls=%q is not true or false", v)
		}
		c.TLS = on
	}
	if !c.TLS && !loopback(c.Endpoint) {
		return nil, fmt.Errorf("--files-url: tls=false is allowed only for a loopback endpoint, not %s: credentials and documents would cross the network in the clear", c.Endpoint)
	}
	if !c.TLS && c.CAFile != "" {
		return nil, errors.New("--files-url: ca= needs TLS")
	}
	if v := q.Get("pathStyle"); v != "" {
		if c.PathStyle, err = strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("--files-url: pathStyle=%q is not true or false", v)
		}
	}
	if v := q.Get("partSizeMB"); v != "" {
		mb, err := strconv.Atoi(v)
		if err != nil || mb<<20 < minPartSize || mb<<20 > maxPartSize {
			return nil, fmt.Errorf("--files-url: partSizeMB=%q must be 5 to 512", v)
		}
		c.PartSize = uint64(mb) << 20
	}
	c.AccessKey, c.SecretKey, c.SessionToken = env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY"), env("AWS_SESSION_TOKEN")
	if c.AccessKey == "" || c.SecretKey == "" {
		return nil, errors.New("--files-url needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment")
	}
	return c, nil
}

// loopback reports whether a host:port names this machine.
func loopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// String is the location without credentials (there are none in it), for logs.
func (c *Config) String() string {
	scheme := "https"
	if !c.TLS {
		scheme = "http"
	}
	return fmt.Sprintf("s3://%s/%s at %s://%s", c.Bucket, c.Prefix, scheme, c.Endpoint)
}
