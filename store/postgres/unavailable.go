package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unavailable reports whether err means the database could not be reached
// or went away during the statement (stopped, restarting, a broken
// connection), as opposed to a refused or failed statement: the request is
// answered 503 and succeeds again once the database is back. folio serve
// gives it to the web server (web.Server.Unavailable).
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// 08: connection exception; 57P01-57P03: administrator shutdown,
		// crash shutdown, cannot connect now (starting or stopping).
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	// A connection closed under a statement, or a pool that timed out
	// acquiring one while every dial failed.
	return pgconn.SafeToRetry(err) || pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded)
}
