package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// AdminSocket serves operator requests on a unix socket in the data
// directory (mode 0600: whoever can read the data directory may use it), for
// commands that need the running server, such as a backup of the bbolt file
// it holds open.
type AdminSocket struct {
	Path string
	// Backup writes the archive to w, calling progress as it copies the
	// SQLite database (bytes copied so far and in all).
	Backup func(ctx context.Context, withFiles bool, w io.Writer, progress func(copied, total int64)) error
	Logger *slog.Logger

	srv *http.Server
	ln  net.Listener
}

// Listen binds the socket, replacing a stale one; Serve then answers on it.
func (a *AdminSocket) Listen() error {
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
	mux.HandleFunc("POST /backup", a.handleBackup)
	a.ln = ln
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return nil
}

// Serve answers on the socket Listen bound until Close, and then returns
// nil. Any other return is the listener failing: the socket is gone and
// folio admin backup can no longer reach this server.
func (a *AdminSocket) Serve() error {
	err := a.srv.Serve(a.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// backupProgressHeader carries a backup's progress, "copied/total" bytes of
// the SQLite database, in the 102 Processing responses sent before the
// archive: the archive can only start once the copy is complete.
const backupProgressHeader = "Folio-Backup-Progress"

// handleBackup serves POST /backup on the admin socket: progress as
// interim responses (one per whole percent) and log lines (one per tenth),
// then the archive.
func (a *AdminSocket) handleBackup(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	a.Logger.Info("backup started")
	sent, logged := -1, -1
	progress := func(copied, total int64) {
		pct := percent(copied, total)
		if pct != sent {
			w.Header().Set(backupProgressHeader, fmt.Sprintf("%d/%d", copied, total))
			w.WriteHeader(http.StatusProcessing)
			w.Header().Del(backupProgressHeader) // 1xx responses send the header map as it is
			sent = pct
		}
		if pct/10 != logged/10 {
			a.Logger.Info("backup progress", "percent", pct, "copiedMB", copied>>20, "totalMB", total>>20, "elapsed", time.Since(start).Round(time.Millisecond))
			logged = pct
		}
	}
	err := a.Backup(r.Context(), r.URL.Query().Get("files") == "true", &gzipHeaderWriter{w: w}, progress)
	if err != nil {
		a.Logger.Error("backup", "err", err)
		panic(http.ErrAbortHandler) // the client sees a broken stream, never a partial archive as success
	}
	a.Logger.Info("backup written", "duration", time.Since(start).Round(time.Millisecond))
}

// gzipHeaderWriter sets the archive's content type on the first write, so
// the interim progress responses before it do not carry it.
type gzipHeaderWriter struct {
	w       http.ResponseWriter
	started bool
}

func (g *gzipHeaderWriter) Write(p []byte) (int, error) {
	if !g.started {
		g.w.Header().Set("Content-Type", "application/gzip")
		g.started = true
	}
	return g.w.Write(p)
}

// percent is copied as a whole percentage of total.
func percent(copied, total int64) int {
	if total <= 0 {
		return 100
	}
	return int(copied * 100 / total)
}

// Close stops the socket.
func (a *AdminSocket) Close() error {
	if a.srv == nil {
		return nil
	}
	defer os.Remove(a.Path)
	return a.srv.Close()
}

// Timeouts of a backup fetched through the admin socket (docs/decisions.md,
// Limits and quotas). The server reports progress at least once per percent of
// the SQLite copy and then streams the archive, so on a multi-GB database
// a backup may run for minutes while a minute without a byte means it is
// stuck.
const (
	BackupConnectTimeout = 5 * time.Second
	BackupIdleTimeout    = time.Minute
)

// BackupTimeouts bound FetchBackup; a zero field takes its default above.
// The backup as a whole is bounded by FetchBackup's context (--timeout).
type BackupTimeouts struct {
	// Connect bounds connecting to the socket.
	Connect time.Duration
	// Idle bounds each wait, once connected, for a progress report or
	// archive bytes from the server.
	Idle time.Duration
}

// idleConn fails a read or write that waits longer than idle, and says so.
type idleConn struct {
	net.Conn
	idle     time.Duration
	timedOut atomic.Bool
}

func (c *idleConn) Read(p []byte) (int, error) {
	c.Conn.SetReadDeadline(time.Now().Add(c.idle))
	n, err := c.Conn.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.timedOut.Store(true)
	}
	return n, err
}

func (c *idleConn) Write(p []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(c.idle))
	n, err := c.Conn.Write(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.timedOut.Store(true)
	}
	return n, err
}

// FetchBackup asks the server listening on the admin socket at path for a
// backup archive and copies it to w, calling progress (when not nil) as the
// server reports the copy of its SQLite database. served is false, with no
// error, when no server answers on the socket (no socket file, or nobody
// listening on it). Once a server is there, every failure is an error: a
// socket that accepts no connection within t.Connect, a server that sends
// nothing for t.Idle, one that breaks off the backup, and ctx ending.
func FetchBackup(ctx context.Context, path string, withFiles bool, w io.Writer, progress func(copied, total int64), t BackupTimeouts) (served bool, err error) {
	if t.Connect <= 0 {
		t.Connect = BackupConnectTimeout
	}
	if t.Idle <= 0 {
		t.Idle = BackupIdleTimeout
	}
	// The transport dials on a goroutine of its own that may outlive Do.
	var conn atomic.Pointer[idleConn]
	var dialErr atomic.Pointer[error]
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		d := net.Dialer{Timeout: t.Connect}
		c, err := d.DialContext(ctx, "unix", path)
		if err != nil {
			dialErr.Store(&err)
			return nil, err
		}
		ic := &idleConn{Conn: c, idle: t.Idle}
		conn.Store(ic)
		return ic, nil
	}}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, "POST", fmt.Sprintf("http://folio/backup?files=%t", withFiles), nil)
	if err != nil {
		return false, err
	}
	if progress != nil {
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
				var copied, total int64
				if _, err := fmt.Sscanf(h.Get(backupProgressHeader), "%d/%d", &copied, &total); code == http.StatusProcessing && err == nil {
					progress(copied, total)
				}
				return nil
			},
		}))
	}
	// fail names what went wrong once connected, and what to do.
	fail := func(err error) (bool, error) {
		switch {
		case ctx.Err() != nil:
			return true, fmt.Errorf("backup through %s: %w", path, context.Cause(ctx))
		case conn.Load().timedOut.Load():
			return true, fmt.Errorf("backup: the server on %s sent no progress and no data for %s and looks stuck; see its log (msg=backup), then run the backup again, or stop the server and back up from the files", path, t.Idle)
		}
		return true, fmt.Errorf("backup: the server on %s broke off the backup (%w); see its log (msg=backup) and run the backup again", path, err)
	}
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil && conn.Load() == nil {
		if ctx.Err() != nil {
			return false, fmt.Errorf("backup through %s: %w", path, context.Cause(ctx))
		}
		var ne net.Error
		if de := dialErr.Load(); de != nil && (errors.As(*de, &ne) && ne.Timeout() || errors.Is(*de, syscall.EAGAIN)) {
			return true, fmt.Errorf("backup: a server listens on %s but accepts no connection (waited up to %s); see its log, then run the backup again", path, t.Connect)
		}
		return false, nil // nobody there: the caller reads the files
	}
	if err != nil {
		return fail(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return true, fmt.Errorf("backup: the server on %s answered %s", path, res.Status)
	}
	if _, err := io.Copy(w, res.Body); err != nil {
		return fail(err)
	}
	return true, nil
}
