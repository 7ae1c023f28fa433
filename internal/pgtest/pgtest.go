// Package pgtest runs a private PostgreSQL cluster for the tests of one
// package: initdb into a temporary directory, postgres listening on
// 127.0.0.1 and a socket in that directory, and a fresh database for each
// test that asks for one.
//
// The cluster starts once per test binary, at the first NewDatabase, and a
// package's TestMain stops it with Stop after m.Run. PostgreSQL refuses to
// run as root: as root, initdb and postgres run as the postgres user that
// Debian's package creates, and the directory is theirs.
//
// Without PostgreSQL installed, NewDatabase skips the test, unless
// FOLIO_REQUIRE_POSTGRES=1 (set by .ci/run) makes it fail.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequireEnv is the environment variable that turns a missing PostgreSQL
// from a skip into a failure.
const RequireEnv = "FOLIO_REQUIRE_POSTGRES"

var (
	once    sync.Once
	cluster *Cluster
	bootErr error
	dbSeq   atomic.Int64
)

// Cluster is a running private PostgreSQL server.
type Cluster struct {
	Dir  string // data directory, also holding the socket
	Port int
	cmd  *exec.Cmd
	log  *bytes.Buffer
	done chan struct{} // closed when postgres has exited

	// For Restart: the binaries, the data directory and the user.
	bin, data string
	cred      *syscall.Credential
}

// ErrNotInstalled reports that no PostgreSQL server binaries were found.
var ErrNotInstalled = errors.New("PostgreSQL server binaries not found (Debian: apt-get install postgresql; or set FOLIO_PG_BIN)")

// BinDir finds the directory of initdb and postgres: FOLIO_PG_BIN, else
// the newest /usr/lib/postgresql/*/bin, else initdb on PATH.
func BinDir() (string, error) {
	if d := os.Getenv("FOLIO_PG_BIN"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err != nil {
			return "", fmt.Errorf("%w: FOLIO_PG_BIN: %v", ErrNotInstalled, err)
		}
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", ErrNotInstalled
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start starts the package's cluster, once; later calls return it.
func Start() (*Cluster, error) {
	once.Do(func() { cluster, bootErr = start() })
	return cluster, bootErr
}

func start() (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	// As root, under /tmp: a TMPDIR inside root's home would be out of
	// the postgres user's reach.
	base := ""
	if os.Geteuid() == 0 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "folio-pgtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, log: &bytes.Buffer{}, done: make(chan struct{})}
	fail := func(err error) (*Cluster, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		if cred, err = postgresUser(); err != nil {
			return fail(err)
		}
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %w\n%s", err, out))
	}
	for range 5 {
		port, err := freePort()
		if err != nil {
			return fail(err)
		}
		c.Port = port
		c.bin, c.data, c.cred = bin, data, cred
		if err = c.run(bin, data, cred); err == nil {
			return c, nil
		}
		bootErr = err
	}
	return fail(bootErr)
}

// postgresUser is the account root runs PostgreSQL as.
func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL needs an unprivileged user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// freePort asks the kernel for a port free on 127.0.0.1 (another process
// may take it before postgres binds it: start then tries another).
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// run starts postgres and waits until it accepts connections.
func (c *Cluster) run(bin, data string, cred *syscall.Credential) error {
	c.log.Reset()
	c.done = make(chan struct{})
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", c.Dir, "-p", strconv.Itoa(c.Port),
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=200", "-c", "shared_buffers=32MB")
	cmd.Stdout, cmd.Stderr = c.log, c.log
	// Should the test binary die without Stop (a panic, a timeout),
	// postgres gets SIGQUIT (immediate shutdown) rather than outliving it.
	// The signal follows the thread that started the child, so that
	// thread is locked and kept until postgres exits.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(c.done)
			return
		}
		started <- nil
		cmd.Wait()
		close(c.done)
	}()
	if err := <-started; err != nil {
		return err
	}
	c.cmd = cmd
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("postgres exited: %s", c.log.String())
		default:
		}
		if time.Now().After(deadline) {
			c.stop()
			return fmt.Errorf("postgres did not answer within 30 s: %v\n%s", err, c.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// URL is the connection URL of database name.
func (c *Cluster) URL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, name)
}

func (c *Cluster) stop() {
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	c.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
}

// Kill stops the server at once, as a crash would (SIGQUIT: immediate
// shutdown, no checkpoint), keeping its data for Restart: the outage of a
// failure test.
func (c *Cluster) Kill() { c.stop() }

// Restart starts the server again on the same port and data after Kill,
// returning once it accepts connections.
func (c *Cluster) Restart() error { return c.run(c.bin, c.data, c.cred) }

// Stop stops the cluster, when one was started, and removes its directory.
// A package's TestMain calls it after m.Run.
func Stop() {
	if cluster == nil {
		return
	}
	cluster.stop()
	os.RemoveAll(cluster.Dir)
}

// NewDatabase creates an empty database in the package's cluster and
// returns its URL. Without PostgreSQL the test is skipped, or fails when
// FOLIO_REQUIRE_POSTGRES=1.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	return newDatabase(tb, "template0")
}

// NewDatabaseFrom creates a database as a copy of a template database that
// setup fills once per test binary (for example by migrating it): copying
// is faster than running the migrations for every test.
func NewDatabaseFrom(tb testing.TB, template string, setup func(url string) error) string {
	tb.Helper()
	c := mustStart(tb)
	templatesMu.Lock()
	err, done := templates[template]
	if !done {
		err = createDatabase(c, template, "template0")
		if err == nil {
			err = setup(c.URL(template))
		}
		templates[template] = err
	}
	templatesMu.Unlock()
	if err != nil {
		tb.Fatalf("template database %s: %v", template, err)
	}
	return newDatabase(tb, template)
}

var (
	templatesMu sync.Mutex
	templates   = map[string]error{} // made, with the error of their setup
)

func mustStart(tb testing.TB) *Cluster {
	tb.Helper()
	c, err := Start()
	if err != nil {
		if errors.Is(err, ErrNotInstalled) && os.Getenv(RequireEnv) != "1" {
			tb.Skipf("no PostgreSQL: %v", err)
		}
		tb.Fatalf("PostgreSQL test cluster: %v", err)
	}
	return c
}

func newDatabase(tb testing.TB, template string) string {
	tb.Helper()
	c := mustStart(tb)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	if err := createDatabase(c, name, template); err != nil {
		tb.Fatal(err)
	}
	return c.URL(name)
}

func createDatabase(c *Cluster, name, template string) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{template}.Sanitize())
	return err
}
