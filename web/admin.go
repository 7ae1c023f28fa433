package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// AdminSocket serves operator requests on a unix socket in the data
// directory (mode 0600: whoever can read the data directory may use it), for
// commands that need the running server, such as a backup of the bbolt file
// it holds open.
type AdminSocket struct {
	Path   string
	Backup func(ctx context.Context, withFiles bool, w io.Writer) error
	Logger *slog.Logger

	srv *http.Server
	ln  net.Listener
}

// Start listens on the socket, replacing a stale one.
func (a *AdminSocket) Start() error {
	os.Remove(a.Path)
	ln, err := net.Listen("unix", a.Path)
	if err != nil {
		return err
	}
	if err := os.Chmod(a.Path, 0o600); err != nil {
		ln.Close()
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /backup", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/gzip")
		if err := a.Backup(r.Context(), r.URL.Query().Get("files") == "true", w); err != nil {
			a.logger().Error("backup", "err", err)
			panic(http.ErrAbortHandler) // the client sees a broken stream, never a partial archive as success
		}
	})
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	a.ln = ln
	go func() {
		// Serve ends early only when accepting fails for good: backups
		// then fall back to the files, which the server holds, so say why.
		if err := a.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			a.logger().Error("admin socket stopped serving; folio admin backup will not reach this server", "path", a.Path, "err", err)
		}
	}()
	return nil
}

func (a *AdminSocket) logger() *slog.Logger {
	if a.Logger == nil {
		return slog.Default()
	}
	return a.Logger
}

// Close stops the socket.
func (a *AdminSocket) Close() error {
	if a.srv == nil {
		return nil
	}
	defer os.Remove(a.Path)
	return a.srv.Close()
}

// Timeouts of BackupClient (docs/deploy.md, Backups and restore).
const (
	// DefaultBackupDialTimeout bounds connecting to the admin socket.
	DefaultBackupDialTimeout = 5 * time.Second
	// DefaultBackupIdleTimeout bounds every wait for the server: for its
	// answer, which comes once it has copied both databases (minutes for a
	// large one), then for each next part of the archive.
	DefaultBackupIdleTimeout = 10 * time.Minute
)

// BackupClient asks the server listening on the admin socket for a backup
// archive. A backup of a large data directory takes minutes, so there is
// no short deadline: the client gives up when the server sends nothing for
// IdleTimeout (a server that accepts and never answers), or when the whole
// backup takes longer than Timeout.
type BackupClient struct {
	Path string
	// DialTimeout and IdleTimeout default to DefaultBackupDialTimeout and
	// DefaultBackupIdleTimeout.
	DialTimeout, IdleTimeout time.Duration
	// Timeout bounds the whole backup (0: no limit).
	Timeout time.Duration
}

// Fetch copies the server's backup archive to w. served is false, with no
// error, when no server listens on the socket (nothing to connect to);
// once connected, any failure is an error.
func (c *BackupClient) Fetch(ctx context.Context, withFiles bool, w io.Writer) (served bool, err error) {
	dial, idle := orDefault(c.DialTimeout, DefaultBackupDialTimeout), orDefault(c.IdleTimeout, DefaultBackupIdleTimeout)
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	var connected atomic.Bool
	dialer := &net.Dialer{Timeout: dial}
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, "unix", c.Path)
		if err != nil {
			return nil, err
		}
		connected.Store(true)
		return &idleConn{Conn: conn, idle: idle}, nil
	}}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://folio/backup?files=%t", withFiles), nil)
	if err != nil {
		return false, err
	}
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		if !connected.Load() {
			return false, nil // no server: the caller reads the files
		}
		return true, fmt.Errorf("backup: the server did not answer: %w", c.explain(err, idle))
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return true, fmt.Errorf("backup: server answered %s", res.Status)
	}
	if _, err := io.Copy(w, res.Body); err != nil {
		return true, fmt.Errorf("backup interrupted: %w", c.explain(err, idle))
	}
	return true, nil
}

// explain names the timeout behind err, if one is.
func (c *BackupClient) explain(err error, idle time.Duration) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("the server sent nothing for %s: %w", idle, err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("the backup took longer than its time limit of %s: %w", c.Timeout, err)
	}
	return err
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// idleConn fails a read that waits longer than idle for data: the deadline
// moves with every read, so a slow but steady stream is never cut.
type idleConn struct {
	net.Conn
	idle time.Duration
}

func (c *idleConn) Read(p []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.idle)); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}
