package web

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"folio/app"
)

// statusByCode is the one table from error code to HTTP status. Codes not
// listed fall back by family (statusOf); unknown errors are 500.
var statusByCode = map[string]int{
	app.ECodeInternal:             http.StatusInternalServerError,
	app.ECodeExportFailed:         http.StatusInternalServerError,
	app.ECodeRouteNotFound:        http.StatusNotFound,
	app.ECodeMethodNotAllowed:     http.StatusNotFound,
	app.ECodeBadCredentials:       http.StatusUnauthorized,
	app.ECodeBadPassword:          http.StatusBadRequest,
	app.ECodeUnauthenticated:      http.StatusUnauthorized,
	app.ECodeJWTOnly:              http.StatusForbidden,
	app.ECodeForbidden:            http.StatusForbidden,
	app.ECodeEmailNotVerified:     http.StatusForbidden,
	app.ECodeBadEmailToken:        http.StatusBadRequest,
	app.ECodeBadRefreshToken:      http.StatusUnauthorized,
	app.ECodeSignupClosed:         http.StatusForbidden,
	app.ECodeTwoFactorRequired:    http.StatusUnauthorized,
	app.ECodeBadTwoFactor:         http.StatusUnauthorized,
	app.ECodeKeyNotFound:          http.StatusNotFound,
	app.ECodeKeyInvalid:           http.StatusUnauthorized,
	app.ECodeKeyInactive:          http.StatusUnauthorized,
	app.ECodeKeyForbidden:         http.StatusForbidden,
	app.ECodeTemplateNotFound:     http.StatusNotFound,
	"ERR_TMPL_002":                http.StatusNotFound,
	"ERR_TMPL_003":                http.StatusNotFound,
	"ERR_TMPL_004":                http.StatusForbidden,
	app.ECodeTemplateNoEdit:       http.StatusForbidden,
	"ERR_TMPL_006":                http.StatusForbidden,
	"ERR_TMPL_007":                http.StatusForbidden,
	"ERR_TMPL_013":                http.StatusNotFound,
	app.ECodeFolderNotFound:       http.StatusNotFound,
	app.ECodeCategoryNotFound:     http.StatusNotFound,
	app.ECodeJobNotFound:          http.StatusNotFound,
	app.ECodeBatchNotFound:        http.StatusNotFound,
	app.ECodeSubscriptionNotFound: http.StatusNotFound,
	app.ECodeDeliveryNotFound:     http.StatusNotFound,
	app.ECodeDownloadDenied:       http.StatusForbidden,
	app.ECodeFileGone:             http.StatusNotFound,
	app.ECodeRenderFailed:         http.StatusInternalServerError,
	app.ECodeJobQuarantined:       http.StatusInternalServerError,
	app.ECodeStorage:              http.StatusInternalServerError,
	// The file store (S3) cannot be reached: nothing is wrong with the
	// request or the file; the same request succeeds once it is back.
	app.ECodeFilesUnavailable: http.StatusServiceUnavailable,
	// The database cannot be reached (Server.Unavailable): likewise.
	app.ECodeDatabaseUnavailable: http.StatusServiceUnavailable,
	app.ECodeTeamNotFound:        http.StatusNotFound,
	"ERR_TEAM_003":               http.StatusForbidden,
	"ERR_TEAM_009":               http.StatusNotFound,
	"ERR_TEAM_011":               http.StatusNotFound,
	app.ECodeUserNotFound:        http.StatusNotFound,
	// Account deletion: the credentials were right but the account cannot be
	// used (restorable, or past its grace period).
	app.ECodePendingDeletion:  http.StatusForbidden,
	app.ECodeDeletionRunning:  http.StatusForbidden,
	app.ECodeAssetNotFound:    http.StatusNotFound,
	app.ECodeAssetForbidden:   http.StatusForbidden,
	app.ECodeSigningNotFound:  http.StatusNotFound,
	app.ECodeSigningForbidden: http.StatusForbidden,
	app.ECodeSigningFailed:    http.StatusInternalServerError,
	"ERR_SHARE_001":           http.StatusNotFound,
	"ERR_SHARE_004":           http.StatusNotFound,
	"ERR_SHARE_005":           http.StatusForbidden,
}

// statusOf returns the HTTP status for an error code.
func statusOf(code string) int {
	if s, ok := statusByCode[code]; ok {
		return s
	}
	switch {
	case strings.HasPrefix(code, "ERR_QUOTA_"):
		return http.StatusTooManyRequests
	case code == "":
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// filesRetryAfter is the Retry-After, in seconds, of a 503: an outage of
// the file store is seldom over sooner.
const filesRetryAfter = 5

// envelope is the spec's error body.
type envelope struct {
	StatusCode  int            `json:"statusCode"`
	Code        string         `json:"code"`
	Message     string         `json:"message"`
	Timestamp   string         `json:"timestamp"`
	Path        string         `json:"path"`
	RelatedInfo map[string]any `json:"relatedInfo,omitempty"`
	RetryAfter  *int           `json:"retryAfter,omitempty"`
}

// writeError writes err as the error envelope. Errors that are not *app.Error
// are logged with their cause and shown as a generic internal error.
func writeError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	var e *app.Error
	if !errors.As(err, &e) && info(r.Context()).unavailable(err) {
		logger.Warn("database unavailable", "method", r.Method, "path", r.URL.Path, "request_id", requestID(r.Context()), "err", err)
		e = app.ErrDatabaseUnavailable
	}
	if e == nil {
		logger.Error("internal error", "method", r.Method, "path", r.URL.Path, "request_id", requestID(r.Context()), "err", err)
		e = &app.Error{Code: app.ECodeInternal, Message: "internal server error"}
	}
	status := statusOf(e.Code)
	info(r.Context()).code = e.Code
	env := envelope{StatusCode: status, Code: e.Code, Message: e.Message, Timestamp: time.Now().UTC().Format(time.RFC3339Nano),
		Path: r.URL.Path, RelatedInfo: e.Info}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", itoa(filesRetryAfter))
	}
	if status == http.StatusTooManyRequests {
		if s, ok := e.Info["retryAfterSeconds"].(int); ok {
			env.RetryAfter = &s
			w.Header().Set("Retry-After", itoa(s))
		}
	}
	writeJSON(w, status, env)
}

// writeJSON writes v with the status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"statusCode":500,"code":"ERR_INTERNAL_001","message":"internal server error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(body)
	w.Write([]byte("\n"))
}
