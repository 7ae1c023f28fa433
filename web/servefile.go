package web

import (
	"io"
	"net/http"
	"time"
)

// serveFile serves a stored file with http.ServeContent (Range,
// Content-Length, If-Modified-Since). The file store was reached before
// this (the file opened), so a store that is down has already answered
// 503. Should the store fail while the body is being sent, the headers
// are gone and a clean end would hand the client a short file: the
// handler aborts instead, which closes the connection (HTTP/1.1) or
// resets the stream (HTTP/2), and the client sees a failed transfer.
func serveFile(w http.ResponseWriter, r *http.Request, name string, mod time.Time, f io.ReadSeeker) {
	rf := &failedRead{ReadSeeker: f}
	http.ServeContent(w, r, name, mod, rf)
	if rf.err != nil {
		panic(http.ErrAbortHandler)
	}
}

// failedRead remembers a read error other than the end of the file.
type failedRead struct {
	io.ReadSeeker
	err error
}

func (f *failedRead) Read(p []byte) (int, error) {
	n, err := f.ReadSeeker.Read(p)
	if err != nil && err != io.EOF {
		f.err = err
	}
	return n, err
}
