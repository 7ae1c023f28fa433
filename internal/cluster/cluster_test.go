// Package cluster tests Folio as several replicas: the real binary, built
// once, runs three times on loopback ports over TLS against one real
// PostgreSQL (internal/pgtest) and one real S3 server (versitygw,
// internal/s3test), and the tests break what a deployment loses: a
// replica (kill -9), the database, the object store (issue 25, "Failure is
// survivable"). Every check reads back what a user would: the API's
// answers, the webhooks an independent receiver verified, the objects in
// the bucket, the rows in PostgreSQL.
//
// Without PostgreSQL or versitygw the tests skip, unless
// FOLIO_REQUIRE_POSTGRES=1 or FOLIO_REQUIRE_S3=1 (set by .ci/run) makes
// them fail.
package cluster

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/internal/pgtest"
	"folio/internal/s3test"
	"folio/web"
	"folio/web/client"
)

// binary is the folio binary TestMain built.
var (
	binary   string
	buildErr error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "folio-cluster-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "folio")
	if p := os.Getenv("FOLIO_BINARY"); p != "" {
		binary = p
	} else {
		buildErr = build(binary)
	}
	code := m.Run()
	pgtest.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles the module's folio command with the go that runs the test.
func build(out string) error {
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		goCmd = "go"
	}
	cmd := exec.Command(goCmd, "build", "-o", out, "folio")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build folio: %v\n%s", err, b)
	}
	return nil
}

// replica is one folio serve process.
type replica struct {
	i    int
	addr string
	data string
	url  string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// cluster is PostgreSQL, an S3 server of its own and three replicas with
// one certificate, and a webhook receiver.
type cluster struct {
	t        *testing.T
	dbURL    string
	s3       *s3test.Server
	bucket   string
	cert     string
	key      string
	ca       []byte
	hooks    *receiver
	rates    string
	replicas []*replica
}

// lease is the replicas' --lease: how soon a dead replica's jobs and
// attempts go to the others.
const lease = 3 * time.Second

func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	c := &cluster{t: t, dbURL: pgtest.NewDatabase(t), s3: s3test.Start(t)}
	c.bucket = c.s3.NewBucket(t)
	dir := t.TempDir()
	var err error
	if c.cert, c.key, err = web.SelfSigned(filepath.Join(dir, "tls"), "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if c.ca, err = os.ReadFile(c.cert); err != nil {
		t.Fatal(err)
	}
	c.hooks = startReceiver(t)
	// Reads with a dashboard login (JWT) are limited low so that the limit
	// test is cheap; the API keys the other tests poll with keep theirs.
	c.rates = filepath.Join(dir, "rates.json")
	if err := os.WriteFile(c.rates, []byte(`{"classes":{"read":{"jwt":`+fmt.Sprint(readLimit)+`}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r := &replica{i: i, data: filepath.Join(dir, fmt.Sprintf("replica%d", i))}
		r.addr = freeAddr(t)
		r.url = "https://" + r.addr
		r.log = filepath.Join(dir, fmt.Sprintf("replica%d.log", i))
		c.replicas = append(c.replicas, r)
	}
	// All at once, as a deployment starts them: the migrations run once.
	var wg sync.WaitGroup
	for _, r := range c.replicas {
		wg.Add(1)
		go func() { defer wg.Done(); c.start(r) }()
	}
	wg.Wait()
	for _, r := range c.replicas {
		c.waitReady(r)
	}
	t.Cleanup(func() {
		for _, r := range c.replicas {
			c.stop(r)
		}
		if t.Failed() {
			for _, r := range c.replicas {
				b, _ := os.ReadFile(r.log)
				if len(b) > 6000 {
					b = b[len(b)-6000:]
				}
				t.Logf("replica %d log (tail):\n%s", r.i, b)
			}
		}
	})
	return c
}

const readLimit = 30

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs replica r's process (again, after a kill).
func (c *cluster) start(r *replica) {
	hooksCA := filepath.Join(filepath.Dir(r.log), "hooks-ca.pem")
	os.WriteFile(hooksCA, c.hooks.caPEM, 0o600)
	logf, err := os.OpenFile(r.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		c.t.Error(err)
		return
	}
	defer logf.Close()
	cmd := exec.Command(binary, "serve", "--addr", r.addr, "--data", r.data, "--database-url", c.dbURL,
		"--files-url", c.s3.URL(c.bucket, "docs"), "--tls-cert", c.cert, "--tls-key", c.key,
		"--workers", "2", "--lease", lease.String(), "--inline-max", "-1", "--webhook-allow-private", "--webhook-ca", hooksCA,
		"--webhook-retry-schedule", "0s,1s,2s,4s", "--rate-limits", c.rates, "--shutdown-grace", "5s")
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+s3test.AccessKey, "AWS_SECRET_ACCESS_KEY="+s3test.SecretKey)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlives the test
	if err := cmd.Start(); err != nil {
		c.t.Error(err)
		return
	}
	r.cmd, r.done = cmd, make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(r.done)
}

// kill ends replica r as kill -9 does.
func (c *cluster) kill(r *replica) {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.done
	r.cmd = nil
}

// stop ends replica r gracefully.
func (c *cluster) stop(r *replica) {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		c.kill(r)
	}
	r.cmd = nil
}

// waitReady waits until r answers /readyz with 200.
func (c *cluster) waitReady(r *replica) {
	c.t.Helper()
	hc := c.httpClient()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if r.cmd == nil {
			break
		}
		select {
		case <-r.done:
			b, _ := os.ReadFile(r.log)
			c.t.Fatalf("replica %d exited at start:\n%s", r.i, b)
		default:
		}
		if res, err := hc.Get(r.url + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, _ := os.ReadFile(r.log)
	c.t.Fatalf("replica %d not ready within 60 s:\n%s", r.i, b)
}

func (c *cluster) httpClient() *http.Client {
	cl, err := client.New("https://127.0.0.1", "", c.ca)
	if err != nil {
		c.t.Fatal(err)
	}
	cl.HTTP.Timeout = 30 * time.Second
	return cl.HTTP
}

// api is a client of one replica.
func (c *cluster) api(r *replica, token string) *client.Client {
	cl, err := client.New(r.url, token, c.ca)
	if err != nil {
		c.t.Fatal(err)
	}
	cl.HTTP.Timeout = 30 * time.Second
	return cl
}

// failover is a client that sends each request to its replica and, when
// that one does not answer at all, to the next: what a load balancer or a
// client with several addresses does.
type failover struct {
	c       *cluster
	token   string
	first   int
	retried int // requests that went to another replica
	mu      sync.Mutex
}

func (f *failover) do(ctx context.Context, method, path string, body, out any) error {
	var last error
	for k := range len(f.c.replicas) {
		r := f.c.replicas[(f.first+k)%len(f.c.replicas)]
		err := f.c.api(r, f.token).Do(ctx, method, path, body, out)
		var ae *client.Error
		if err == nil || errors.As(err, &ae) {
			if k > 0 {
				f.mu.Lock()
				f.retried++
				f.mu.Unlock()
			}
			return err
		}
		last = err
	}
	return last
}

// account signs up on replica 0, verifies the email with the token replica
// 0 mailed (the link works on replica 1), logs in on replica 2 and creates
// an API key on replica 0 with that login: one account, one session, on
// every replica.
type account struct {
	email, jwt, key, teamID string
}

var mailToken = regexp.MustCompile(`token=([A-Za-z0-9]+)`)

func (c *cluster) signup(ctx context.Context, name string) account {
	c.t.Helper()
	r0, r1, r2 := c.replicas[0], c.replicas[1%len(c.replicas)], c.replicas[2%len(c.replicas)]
	email := fmt.Sprintf("%s-%d@example.com", name, time.Now().UnixNano())
	if _, err := c.api(r0, "").Signup(ctx, email, "cluster password", name); err != nil {
		c.t.Fatalf("signup on replica 0: %v", err)
	}
	var token string
	mails, _ := filepath.Glob(filepath.Join(r0.data, "mail", "*.eml"))
	for _, m := range mails {
		b, _ := os.ReadFile(m)
		if bytes.Contains(b, []byte(email)) {
			if mm := mailToken.FindSubmatch(b); mm != nil {
				token = string(mm[1])
			}
		}
	}
	if token == "" {
		c.t.Fatalf("no verification mail to %s in replica 0's outbox", email)
	}
	if err := c.api(r1, "").Do(ctx, "POST", "/api/auth/verify-email", map[string]any{"token": token}, nil); err != nil {
		c.t.Fatalf("verify on replica 1: %v", err)
	}
	sess, err := c.api(r2, "").Login(ctx, email, "cluster password")
	if err != nil {
		c.t.Fatalf("login on replica 2: %v", err)
	}
	var key struct {
		PlainKey string `json:"plainKey"`
		TeamID   string `json:"teamId"`
	}
	if err := c.api(r0, sess.AccessToken).Do(ctx, "POST", "/api/api-keys", map[string]any{"name": "cluster"}, &key); err != nil {
		c.t.Fatalf("create key on replica 0 with replica 2's login: %v", err)
	}
	return account{email: email, jwt: sess.AccessToken, key: key.PlainKey, teamID: key.TeamID}
}

// invoice creates the invoice template from testdata. The replicas keep
// every document in S3 (--inline-max -1), not only those over 64 KB.
func (c *cluster) invoice(ctx context.Context, a account) (string, map[string]any) {
	c.t.Helper()
	api := c.api(c.replicas[0], a.jwt) // templates are a dashboard login's
	def, vars, err := client.LoadExample(filepath.Join("..", "..", "testdata", "templates"))
	if err != nil {
		c.t.Fatal(err)
	}
	id, err := api.CreateTemplate(ctx, def)
	if err != nil {
		c.t.Fatalf("create template: %v", err)
	}
	return id, vars
}

// bigVars is the invoice with n items, numbered tag.
func bigVars(vars map[string]any, n int, tag string) map[string]any {
	out := map[string]any{}
	for k, v := range vars {
		out[k] = v
	}
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"description": fmt.Sprintf("%s line %d — Übersetzung, Ωμέγα, Тверская", tag, i), "quantity": i%7 + 1, "unitPrice": 10 + i}
	}
	out["items"] = items
	out["invoiceNumber"] = tag
	return out
}

// objects counts a team's files in the bucket (the documents are kept as
// docs/<team>/<job>.pdf).
func (c *cluster) objects(teamID string) int {
	n := 0
	root := filepath.Join(c.s3.BucketDir(c.bucket), "docs", teamID)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// receiver is an independent webhook endpoint: it checks every delivery's
// signature with the subscription's secret and counts what arrived.
type receiver struct {
	url    string
	caPEM  []byte
	mu     sync.Mutex
	secret string
	// per job: the distinct event ids of document.generated, and all
	// deliveries (a redelivery repeats an event id).
	events     map[string]map[string]bool
	deliveries int
	batches    map[string]int // batch.completed per batch id
	badSig     int
}

func startReceiver(t *testing.T) *receiver {
	r := &receiver{events: map[string]map[string]bool{}, batches: map[string]int{}}
	// A CA and a leaf it signed: the webhook client refuses self-signed
	// certificates, even trusted ones.
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cluster test receiver CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ = x509.ParseCertificate(caDER)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "receiver"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(r)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: leafKey}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/hooks"
	r.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return r
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	ts, sig := req.Header.Get("X-Service-Timestamp"), req.Header.Get("X-Service-Signature")
	r.mu.Lock()
	defer r.mu.Unlock()
	m := hmac.New(sha256.New, []byte(r.secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	if r.secret == "" || !hmac.Equal([]byte(sig), []byte("v1="+hex.EncodeToString(m.Sum(nil)))) {
		r.badSig++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var e struct {
		Event string `json:"event"`
		Data  struct {
			JobID   string `json:"jobId"`
			BatchID string `json:"batchId"`
		} `json:"data"`
	}
	json.Unmarshal(body, &e)
	id := req.Header.Get("X-Service-Event-Id")
	switch e.Event {
	case "document.generated":
		r.deliveries++
		if r.events[e.Data.JobID] == nil {
			r.events[e.Data.JobID] = map[string]bool{}
		}
		r.events[e.Data.JobID][id] = true
	case "batch.completed":
		r.batches[e.Data.BatchID]++
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) setSecret(s string) {
	r.mu.Lock()
	r.secret = s
	r.mu.Unlock()
}

// counts returns how many jobs got document.generated, how many of those got
// more than one distinct event, and the deliveries.
func (r *receiver) counts() (jobs, twice, deliveries, badSig int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ids := range r.events {
		jobs++
		if len(ids) > 1 {
			twice++
		}
	}
	return jobs, twice, r.deliveries, r.badSig
}

func (r *receiver) batchDone(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.batches[id]
}

// db opens the cluster's database for the tests' own reads.
func (c *cluster) db(ctx context.Context) *pgx.Conn {
	conn, err := pgx.Connect(ctx, c.dbURL)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func eventually(t *testing.T, within time.Duration, what string, ok func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		var done bool
		if done, last = ok(); done {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s (%s)", what, within, last)
}
