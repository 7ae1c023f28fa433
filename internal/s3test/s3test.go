// Package s3test runs a real S3 server for tests: versitygw, a Go S3
// gateway over a directory (its POSIX backend), on a free loopback port
// with a temporary directory. Tests use the one shared server of their
// test binary (Shared) with a bucket of their own (NewBucket), or a
// server of their own when they stop and restart it (Start).
//
// The binary is $FOLIO_VERSITYGW, else versitygw on PATH (.ci/run
// installs a pinned version). When it is missing a test skips, unless
// FOLIO_REQUIRE_S3=1 (set by .ci/run): then it fails, so CI can never
// pass by skipping the S3 tests.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Credentials of the test servers' root user.
const (
	AccessKey = "folio-test-access"
	SecretKey = "folio-test-secret-key-0123456789"
	Region    = "us-east-1"
)

// Server is a running (or stopped) versitygw.
type Server struct {
	Endpoint string // 127.0.0.1:port
	bin      string
	root     string // the buckets' directory
	meta     string // sidecar metadata directory
	logPath  string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan error
}

// Binary returns versitygw's path, skipping or failing tb when there is none.
func Binary(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("FOLIO_VERSITYGW"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		missing(tb, "FOLIO_VERSITYGW="+p+" does not exist")
	}
	p, err := exec.LookPath("versitygw")
	if err != nil {
		missing(tb, "versitygw is not on PATH (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)")
	}
	return p
}

func missing(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("FOLIO_REQUIRE_S3") == "1" {
		tb.Fatalf("S3 server required (FOLIO_REQUIRE_S3=1) but unavailable: %s", why)
	}
	tb.Skipf("no S3 server: %s (set FOLIO_REQUIRE_S3=1 to fail instead)", why)
}

var (
	shared     *Server
	sharedErr  error
	sharedOnce sync.Once
)

// Shared returns the test binary's server, starting it the first time. It
// runs until the test binary exits (it is killed with its parent).
func Shared(tb testing.TB) *Server {
	tb.Helper()
	bin := Binary(tb)
	sharedOnce.Do(func() {
		removeStale()
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("folio-s3test-%d", os.Getpid()))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			sharedErr = err
			return
		}
		shared, sharedErr = start(bin, dir)
	})
	if sharedErr != nil {
		tb.Fatalf("start versitygw: %v", sharedErr)
	}
	return shared
}

// removeStale deletes the directories of shared servers whose test
// binaries have exited (the server dies with its binary; nothing else
// removes its directory).
func removeStale() {
	if runtime.GOOS != "linux" {
		return // liveness is read from /proc
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "folio-s3test-*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "folio-s3test-"))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			os.RemoveAll(d)
		}
	}
}

// Start starts a server of tb's own, stopped at the end of the test.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := start(Binary(tb), tb.TempDir())
	if err != nil {
		tb.Fatalf("start versitygw: %v", err)
	}
	tb.Cleanup(s.Stop)
	return s
}

func start(bin, dir string) (*Server, error) {
	s := &Server{bin: bin, root: filepath.Join(dir, "buckets"), meta: filepath.Join(dir, "meta"), logPath: filepath.Join(dir, "versitygw.log")}
	for _, d := range []string{s.root, s.meta} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	var err error
	for range 3 { // a free port found may be taken before the server binds it
		if s.Endpoint, err = freePort(); err != nil {
			return nil, err
		}
		if err = s.Restart(); err == nil {
			return s, nil
		}
	}
	return nil, err
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Restart starts the server (again) on its port, over the same directory.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(s.bin, "--access", AccessKey, "--secret", SecretKey, "--region", Region,
		"--port", s.Endpoint, "--quiet", "posix", "--sidecar", s.meta, s.root)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("versitygw exited at start (%v): %s", err, s.log())
		default:
		}
		if s.answers() {
			s.cmd = cmd
			go func() { // keep the exit status for Stop
				err := <-exited
				exited <- err
			}()
			s.exited = exited
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-exited
	return fmt.Errorf("versitygw did not answer on %s within 30 s: %s", s.Endpoint, s.log())
}

// answers reports whether the server answers HTTP (any status: an
// anonymous request is refused, which is an answer).
func (s *Server) answers() bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + s.Endpoint + "/")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

func (s *Server) log() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// Stop kills the server (an outage, as abrupt as a crash); Restart brings
// it back with its objects.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.exited
	s.cmd, s.exited = nil, nil
}

// NewBucket creates a bucket with a fresh name and returns it.
func (s *Server) NewBucket(tb testing.TB) string {
	tb.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	name := "folio-" + hex.EncodeToString(b)
	// The POSIX backend's bucket is a directory; creating it through the
	// API would need a signed request, the directory is the same thing.
	if err := os.Mkdir(filepath.Join(s.root, name), 0o700); err != nil {
		tb.Fatal(err)
	}
	return name
}

// BucketDir is the directory holding bucket's objects (the POSIX
// backend keeps each object as a file under it): an independent reader of
// what was stored.
func (s *Server) BucketDir(bucket string) string { return filepath.Join(s.root, bucket) }

// URL is the --files-url of bucket/prefix on this server.
func (s *Server) URL(bucket, prefix string) string {
	return fmt.Sprintf("s3://%s/%s?endpoint=%s&region=%s&tls=false", bucket, prefix, s.Endpoint, Region)
}

// Env sets the credentials in tb's environment (t.Setenv).
func Env(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", SecretKey)
}

// Getenv is an environment lookup with the credentials, for parsers that
// take one.
func Getenv(k string) string {
	switch k {
	case "AWS_ACCESS_KEY_ID":
		return AccessKey
	case "AWS_SECRET_ACCESS_KEY":
		return SecretKey
	}
	return ""
}

// Wait waits until ctx ends or the server answers.
func (s *Server) Wait(ctx context.Context) error {
	for !s.answers() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
