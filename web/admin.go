package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
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
			a.Logger.Error("backup", "err", err)
			panic(http.ErrAbortHandler) // the client sees a broken stream, never a partial archive as success
		}
	})
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go a.srv.Serve(ln)
	return nil
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
// backup archive and copies it to w. served is false, with no error, when no
// server answers on the socket.
func FetchBackup(path string, withFiles bool, w io.Writer) (served bool, err error) {
	res, err := AdminClient(path).Post(fmt.Sprintf("http://folio/backup?files=%t", withFiles), "", nil)
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
