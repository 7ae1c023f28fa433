package app

import (
	"errors"
	"fmt"
)

// Error is a failure the caller should see: Code is one of the spec's error
// codes (ERR_TMPL_001, ...), Message is safe to show, and Info becomes the
// envelope's relatedInfo. Anything that is not an *Error is internal.
type Error struct {
	Code    string
	Message string
	Info    map[string]any
}

// Error implements error.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithInfo returns a copy of e carrying the given relatedInfo pairs.
func (e *Error) WithInfo(kv ...any) *Error {
	c := *e
	c.Info = make(map[string]any, len(e.Info)+len(kv)/2)
	for k, v := range e.Info {
		c.Info[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if k, ok := kv[i].(string); ok {
			c.Info[k] = kv[i+1]
		}
	}
	return &c
}

// ErrorCode returns the code of err when it is (or wraps) an *Error, else "".
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Error codes used by Folio. The spec's codes keep their spec names; codes the
// spec does not list are documented in docs/decisions.md.
const (
	ECodeInternal = "ERR_INTERNAL_001"

	ECodeRouteNotFound        = "ERR_ROUTE_001"
	ECodeMethodNotAllowed     = "ERR_ROUTE_002"
	ECodeInvalidJSON          = "ERR_VALID_001"
	ECodeVariables            = "ERR_VALID_002"
	ECodeInvalidField         = "ERR_VALID_003"
	ECodeRequired             = "ERR_VALID_005"
	ECodeBadCredentials       = "ERR_AUTH_001"
	ECodeBadPassword          = "ERR_AUTH_002"
	ECodeUnauthenticated      = "ERR_AUTH_003"
	ECodeJWTOnly              = "ERR_AUTH_004"
	ECodeForbidden            = "ERR_AUTH_005"
	ECodeEmailNotVerified     = "ERR_AUTH_006"
	ECodeBadEmailToken        = "ERR_AUTH_007"
	ECodeBadRefreshToken      = "ERR_AUTH_008"
	ECodeSignupClosed         = "ERR_AUTH_009"
	ECodeTwoFactorRequired    = "ERR_AUTH_011"
	ECodeBadTwoFactor         = "ERR_AUTH_012"
	ECodeKeyNotFound          = "ERR_AKEY_001"
	ECodeKeyInvalid           = "ERR_AKEY_002"
	ECodeKeyInactive          = "ERR_AKEY_003"
	ECodeKeyForbidden         = "ERR_AKEY_004"
	ECodeRateLimited          = "ERR_QUOTA_003"
	ECodeTemplateNotFound     = "ERR_TMPL_001"
	ECodeTemplateNoEdit       = "ERR_TMPL_005"
	ECodeSchemaInvalid        = "ERR_TMPL_008"
	ECodeTemplateType         = "ERR_TMPL_009"
	ECodeExpression           = "ERR_TMPL_024"
	ECodeTemplateExists       = "ERR_TMPL_011"
	ECodePlanLimit            = "ERR_PLAN_002"
	ECodeJobNotFound          = "ERR_JOB_001"
	ECodeFormatUnsupported    = "ERR_JOB_002"
	ECodeDownloadDenied       = "ERR_JOB_003"
	ECodeFileGone             = "ERR_JOB_004"
	ECodeRenderFailed         = "ERR_JOB_005"
	ECodeRenderTimeout        = "ERR_JOB_006"
	ECodeStorage              = "ERR_JOB_007"
	ECodeNotRetryable         = "ERR_JOB_008"
	ECodeJobQuarantined       = "ERR_JOB_009"
	ECodeFilesUnavailable     = "ERR_STORAGE_001"
	ECodeDatabaseUnavailable  = "ERR_STORAGE_002"
	ECodeBatchNotFound        = "ERR_BATCH_001"
	ECodeSubscriptionNotFound = "ERR_WHK_001"
	ECodeDeliveryNotFound     = "ERR_WHK_002"
	ECodeNotRetryableDelivery = "ERR_WHK_003"
	ECodeTeamNotFound         = "ERR_TEAM_001"
	ECodeUserNotFound         = "ERR_USER_001"
	ECodeEmailInUse           = "ERR_USER_002"
	ECodeEmailInvalid         = "ERR_USER_003"
	ECodeUnknownPlan          = "ERR_PLAN_001"
	ECodePayloadTooLarge      = "ERR_LIMIT_010"
	ECodeURLTooLong           = "ERR_LIMIT_011"
	ECodeHeadersTooLarge      = "ERR_LIMIT_012"
	ECodeVariablesTooLarge    = "ERR_LIMIT_013"
	ECodeBatchTooLarge        = "ERR_LIMIT_014"
	ECodeBatchDocTooLarge     = "ERR_LIMIT_015"
	ECodeQuotaExceeded        = "ERR_QUOTA_008"
	ECodeNoCredits            = "ERR_QUOTA_011"
	// ECodeEInvoice: the e-invoice breaks an EN 16931 (or XRechnung) rule
	// (400; relatedInfo names the rule, the mapping's field and expression).
	ECodeEInvoice = "ERR_EINVOICE_001"
)

// ErrRequired reports a missing required request field (ERR_VALID_005).
func ErrRequired(field string) *Error {
	return (&Error{Code: ECodeRequired, Message: fmt.Sprintf("%s is required", field)}).WithInfo("field", field)
}

// ErrInvalid reports a request field with a value that is not allowed.
func ErrInvalid(field, format string, args ...any) *Error {
	return (&Error{Code: ECodeInvalidField, Message: fmt.Sprintf(format, args...)}).WithInfo("field", field)
}

// ErrForbidden reports a missing permission with the spec's relatedInfo.
func ErrForbidden(required string, granted []string) *Error {
	if granted == nil {
		granted = []string{}
	}
	return (&Error{Code: ECodeForbidden, Message: "this action needs the " + required + " permission"}).
		WithInfo("required", required, "granted", granted)
}

// ErrNotFound returns a not-found error with the code for the noun.
func ErrNotFound(code, noun string) *Error {
	return &Error{Code: code, Message: noun + " not found"}
}

// ErrFilesUnavailable reports that the file store could not be reached (an
// S3 endpoint down, timing out or answering 5xx): the file may well exist,
// so the caller answers 503 and a job retries, never "not found" or failed.
// File stores wrap their cause with it: errors.Is and ErrorCode both see it.
var ErrFilesUnavailable = &Error{Code: ECodeFilesUnavailable, Message: "file storage is unavailable; try again shortly"}

// ErrDatabaseUnavailable reports that the database (PostgreSQL, with
// several replicas) could not be reached: nothing was changed, and the same
// request succeeds once it is back (503, Retry-After).
var ErrDatabaseUnavailable = &Error{Code: ECodeDatabaseUnavailable, Message: "the database is unavailable; try again shortly"}
