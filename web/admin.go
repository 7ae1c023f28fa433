package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"os"
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
	mux.HandleFunc("POST /backup", a.handleBackup)
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go a.srv.Serve(ln)
	return nil
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

// AdminClient returns an HTTP client that talks to the socket at path.
func AdminClient(path string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}}
}

// FetchBackup asks the server listening on the admin socket at path for a
// backup archive and copies it to w, calling progress (when not nil) as the
// server reports the copy of its SQLite database. served is false, with no
// error, when no server answers on the socket.
func FetchBackup(path string, withFiles bool, w io.Writer, progress func(copied, total int64)) (served bool, err error) {
	req, err := http.NewRequest("POST", fmt.Sprintf("http://folio/backup?files=%t", withFiles), nil)
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
	res, err := AdminClient(path).Do(req)
	if err != nil {
		return false, nil
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return true, fmt.Errorf("backup: server answered %s", res.Status)
	}
	if _, err := io.Copy(w, res.Body); err != nil {
		return true, fmt.Errorf("backup interrupted: %w", err)
	}
	return true, nil
}
