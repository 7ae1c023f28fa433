package web

import (
	"net/http"

	"folio/app"
	"folio/web/dashboard"
)

// routes lists every route: METHOD /path, who may call it, and its handler.
func (s *Server) routes() {
	// Authentication (DESIGN.md section 3).
	s.handle("POST /api/auth/signup", public, s.handleSignup)
	s.handle("POST /api/auth/login", public, s.handleLogin)
	s.handle("POST /api/auth/refresh", public, s.handleRefresh)
	s.handle("POST /api/auth/logout", public, s.handleLogout)
	s.handle("POST /api/auth/verify-email", public, s.handleVerifyEmail)
	s.handle("POST /api/auth/resend-verification", jwtOnly, s.handleResendVerification)
	s.handle("POST /api/auth/restore", public, s.handleRestoreAccount)

	// Users (JWT only; the avatar picture is public).
	s.handle("GET /api/users/me", jwtOnly, s.handleMe)
	s.handle("PATCH /api/users/me", jwtOnly, s.handleUpdateMe)
	s.handle("DELETE /api/users/me", jwtOnly, s.handleDeleteMe)
	s.handle("POST /api/users/me/change-password", jwtOnly, s.handleChangePassword)
	s.handle("GET /api/users/me/email-preferences", jwtOnly, s.handleGetEmailPreferences)
	s.handle("PATCH /api/users/me/email-preferences", jwtOnly, s.handleUpdateEmailPreferences)
	s.handle("POST /api/users/me/avatar", jwtOnly, s.handleSetAvatar)
	s.handle("DELETE /api/users/me/avatar", jwtOnly, s.handleDeleteAvatar)
	s.handle("GET /api/users/{id}/avatar", public, s.handleAvatar)
	s.handle("GET /api/users/me/export", jwtOnly, s.handleExport)
	s.handle("GET /api/users/me/2fa/status", jwtOnly, s.handleTwoFactorStatus)
	s.handle("POST /api/users/me/2fa/enable", jwtOnly, s.handleEnableTwoFactor)
	s.handle("POST /api/users/me/2fa/verify", jwtOnly, s.handleVerifyTwoFactor)
	s.handle("POST /api/users/me/2fa/disable", jwtOnly, s.handleDisableTwoFactor)
	s.handle("POST /api/users/me/2fa/backup-codes", jwtOnly, s.handleBackupCodes)

	// Teams (JWT only). Member, invitation and activity routes act on the
	// caller's team: X-Team-Id, else the personal team.
	s.handle("POST /api/teams", jwtOnly, s.handleCreateTeam)
	s.handle("GET /api/teams", jwtOnly, s.handleListTeams)
	s.handle("GET /api/teams/{id}", jwtOnly, s.handleGetTeam)
	s.handle("PUT /api/teams/{id}", jwtOnly, s.handleUpdateTeam)
	s.handle("DELETE /api/teams/{id}", jwtOnly, s.handleDeleteTeam)
	s.handle("POST /api/teams/leave", jwtOnly, s.handleLeaveTeam)
	s.handle("GET /api/teams/members", jwtOnly, s.handleListMembers)
	s.handle("POST /api/teams/members/invite", jwtOnly, s.handleInvite)
	s.handle("DELETE /api/teams/members/{id}", jwtOnly, s.handleRemoveMember)
	s.handle("PATCH /api/teams/members/{id}/role", jwtOnly, s.handleChangeRole)
	s.handle("DELETE /api/teams/members/{id}/invitation", jwtOnly, s.handleCancelInvitation)
	s.handle("GET /api/teams/invitations", jwtOnly, s.handleTeamInvitations)
	s.handle("GET /api/teams/invitations/my", jwtOnly, s.handleMyInvitations)
	s.handle("POST /api/teams/invitations/{id}/accept", jwtOnly, s.handleAcceptInvitation)
	s.handle("POST /api/teams/invitations/{id}/reject", jwtOnly, s.handleRejectInvitation)
	s.handle("GET /api/teams/activity", jwtOnly, s.handleActivity)

	// API keys (JWT only).
	s.handle("POST /api/api-keys", jwtOnly, s.handleCreateKey)
	s.handle("GET /api/api-keys", jwtOnly, s.handleListKeys)
	s.handle("GET /api/api-keys/{id}", jwtOnly, s.handleGetKey)
	s.handle("PATCH /api/api-keys/{id}", jwtOnly, s.handleUpdateKey)
	s.handle("POST /api/api-keys/{id}/revoke", jwtOnly, s.handleRevokeKey)
	s.handle("GET /api/api-keys/{id}/stats", jwtOnly, s.handleKeyStats)
	s.handle("DELETE /api/api-keys/{id}", jwtOnly, s.handleDeleteKey)

	// Templates: writes under /api/templates need a JWT; /api/v1/templates
	// serves API keys (reads: templates:read, writes: templates:write); reads
	// accept either. The typed forms /api/templates/attachment/... (legacy
	// aliases) and /api/templates/{type}/{id}/share(s) are mapped onto these
	// before routing (templatePaths in web/template.go).
	s.handle("POST /api/templates", jwtOnly, s.handleCreateTemplate)
	s.handle("GET /api/templates", anyAuth, s.handleListTemplates)
	s.handle("GET /api/templates/{id}", anyAuth, s.handleGetTemplate)
	s.handle("PUT /api/templates/{id}", jwtOnly, s.handleUpdateTemplate)
	s.handle("DELETE /api/templates/{id}", jwtOnly, s.handleDeleteTemplate)
	s.handle("POST /api/templates/{id}/publish", jwtOnly, s.handlePublishTemplate)
	s.handle("POST /api/templates/{id}/duplicate", jwtOnly, s.handleDuplicateTemplate)
	s.handle("GET /api/templates/{id}/export", anyAuth, s.handleExportTemplate)
	s.handle("POST /api/templates/import", jwtOnly, s.handleImportTemplate)
	s.handle("GET /api/templates/{id}/versions", anyAuth, s.handleTemplateVersions)
	s.handle("GET /api/templates/{id}/versions/{versionId}", anyAuth, s.handleTemplateVersion)
	s.handle("POST /api/templates/{id}/versions/{versionId}/restore", jwtOnly, s.handleRestoreVersion)
	s.handle("GET /api/templates/{id}/automation-fields", anyAuth, s.handleAutomationFields)
	s.handle("POST /api/templates/bulk-delete", jwtOnly, s.handleBulkDeleteTemplates)
	s.handle("POST /api/templates/bulk-categories", jwtOnly, s.handleBulkCategories)
	s.handle("POST /api/templates/{id}/share", jwtOnly, s.handleShareTemplate)
	s.handle("GET /api/templates/{id}/shares", jwtOnly, s.handleListShares)
	s.handle("GET /api/templates/shared", anyAuth, s.handleSharedTemplates)
	s.handle("PUT /api/templates/shares/{shareId}", jwtOnly, s.handleUpdateShare)
	s.handle("DELETE /api/templates/shares/{shareId}", jwtOnly, s.handleDeleteShare)
	s.handle("GET /api/v1/templates", anyAuth, s.handleListTemplates)
	s.handle("GET /api/v1/templates/{id}", anyAuth, s.handleGetTemplate)
	s.handle("POST /api/v1/templates", anyAuth, s.handleCreateTemplate)
	s.handle("PATCH /api/v1/templates/{id}", anyAuth, s.handleUpdateTemplate)
	s.handle("DELETE /api/v1/templates/{id}", anyAuth, s.handleDeleteTemplate)

	// Assets (DESIGN.md section 10): the team's images, fonts and PDFs,
	// named in templates as asset:<name or id>. Reads need templates:read,
	// writes templates:write (docs/decisions.md, Assets).
	s.handle("POST /api/assets", anyAuth, s.handleCreateAsset)
	s.handle("GET /api/assets", anyAuth, s.handleListAssets)
	s.handle("GET /api/assets/{id}", anyAuth, s.handleGetAsset)
	s.handle("GET /api/assets/{id}/content", anyAuth, s.handleAssetContent)
	s.handle("PUT /api/assets/{id}", anyAuth, s.handleReplaceAsset)
	s.handle("PATCH /api/assets/{id}", anyAuth, s.handleRenameAsset)
	s.handle("DELETE /api/assets/{id}", anyAuth, s.handleDeleteAsset)

	// Signing certificates (issue 23): the team's PKCS #12 keys for
	// "sign". Reads need templates:read; uploads and deletes a dashboard
	// login of an owner or admin. Key material is never returned.
	s.handle("POST /api/signing-certificates", jwtOnly, s.handleCreateSigningCertificate)
	s.handle("GET /api/signing-certificates", anyAuth, s.handleListSigningCertificates)
	s.handle("GET /api/signing-certificates/{id}", anyAuth, s.handleGetSigningCertificate)
	s.handle("DELETE /api/signing-certificates/{id}", jwtOnly, s.handleDeleteSigningCertificate)

	// Template folders and categories (minimal team records for filing templates).
	s.handle("POST /api/template-folders", jwtOnly, s.handleCreateGroup(app.GroupFolder))
	s.handle("GET /api/template-folders", anyAuth, s.handleListGroups(app.GroupFolder))
	s.handle("PUT /api/template-folders/{id}", jwtOnly, s.handleRenameGroup(app.GroupFolder))
	s.handle("DELETE /api/template-folders/{id}", jwtOnly, s.handleDeleteGroup(app.GroupFolder))
	s.handle("POST /api/template-categories", jwtOnly, s.handleCreateGroup(app.GroupCategory))
	s.handle("GET /api/template-categories", anyAuth, s.handleListGroups(app.GroupCategory))
	s.handle("PUT /api/template-categories/{id}", jwtOnly, s.handleRenameGroup(app.GroupCategory))
	s.handle("DELETE /api/template-categories/{id}", jwtOnly, s.handleDeleteGroup(app.GroupCategory))
	s.handle("GET /api/templates/{id}/analytics", anyAuth, s.handleTemplateAnalytics)
	s.handle("GET /api/v1/templates/{id}/analytics", anyAuth, s.handleTemplateAnalytics)

	// Previews and validation: render or check without storing anything.
	s.handle("POST /api/templates/{id}/preview", anyAuth, s.handlePreview)
	s.handle("POST /api/templates/preview", anyAuth, s.handlePreviewDefinition)
	s.handle("POST /api/templates/validate-schema", anyAuth, s.handleValidateSchema)
	s.handle("POST /api/templates/validate-variables", anyAuth, s.handleValidateVariables)

	// Documents.
	s.handle("POST /api/v1/documents/generate", anyAuth, s.handleGenerate)
	s.handle("GET /api/v1/documents/jobs", anyAuth, s.handleListJobs)
	s.handle("GET /api/v1/documents/jobs/{jobId}", anyAuth, s.handleGetJob)
	s.handle("GET /api/v1/documents/jobs/{jobId}/download", public, s.handleDownload)
	s.handle("POST /api/v1/documents/generate/batch", anyAuth, s.handleGenerateBatch)
	s.handle("GET /api/v1/documents/batches/{batchId}", anyAuth, s.handleGetBatch)
	s.handle("GET /api/v1/documents/batches/{batchId}/combined", public, s.handleCombined)
	s.handle("GET /api/v1/documents/jobs/export", anyAuth, s.handleExportJobs)
	s.handle("POST /api/v1/documents/jobs/{jobId}/retry", anyAuth, s.handleRetryJob)
	s.handle("POST /api/v1/documents/jobs/bulk/retry", anyAuth, s.handleRetryJobs)
	s.handle("DELETE /api/v1/documents/jobs/{jobId}", anyAuth, s.handleDeleteJob)
	s.handle("DELETE /api/v1/documents/jobs/bulk", anyAuth, s.handleDeleteJobs)
	s.handle("GET /api/v1/documents/queue/stats", anyAuth, s.handleQueueStats)
	s.handle("GET /api/v1/documents/analytics", anyAuth, s.handleDocumentAnalytics)
	s.handle("GET /api/v1/analytics/usage", anyAuth, s.handleUsage)

	// Dashboard analytics (JWT).
	s.handle("GET /api/dashboard/analytics/wallet", jwtOnly, s.handleWallet)
	s.handle("GET /api/dashboard/analytics/health", jwtOnly, s.handleHealth)
	s.handle("GET /api/dashboard/analytics/insights", jwtOnly, s.handleInsights)
	s.handle("GET /api/dashboard/analytics/export", jwtOnly, s.handleAnalyticsExport)

	// Webhook subscriptions.
	s.handle("POST /api/v1/webhook-subscriptions", anyAuth, s.handleCreateSubscription)
	s.handle("GET /api/v1/webhook-subscriptions", anyAuth, s.handleListSubscriptions)
	s.handle("GET /api/v1/webhook-subscriptions/{id}", anyAuth, s.handleGetSubscription)
	s.handle("PATCH /api/v1/webhook-subscriptions/{id}", anyAuth, s.handleUpdateSubscription)
	s.handle("DELETE /api/v1/webhook-subscriptions/{id}", anyAuth, s.handleDeleteSubscription)
	s.handle("POST /api/v1/webhook-subscriptions/{id}/test", anyAuth, s.handleTestSubscription)
	s.handle("GET /api/v1/webhook-subscriptions/{id}/deliveries", anyAuth, s.handleListDeliveries)
	s.handle("POST /api/v1/webhook-subscriptions/{id}/deliveries/{deliveryId}/retry", anyAuth, s.handleRetryDelivery)

	// Operations (web/ops.go): the API description, probes, metrics, profiles.
	s.handle("GET /api/openapi.json", public, s.handleOpenAPI)
	s.handle("GET /healthz", probe, s.handleHealthz)
	s.handle("GET /readyz", probe, s.handleReadyz)
	s.handle("GET /metrics", opsOnly, s.handleMetrics)
	s.handle("GET /debug/pprof/", opsOnly, s.handlePprof)

	// Dashboard (web/dashboard): HTML pages signed in with a session cookie,
	// not bearer tokens, so it is mounted beside the API's middleware.
	if s.Dashboard != nil {
		if dash, ok := s.Dashboard.(*dashboard.Dashboard); ok && s.Rates != nil {
			dash.Limit = s.Rates.limitTeam // signed-in pages count like JWT calls
		}
		d := s.limitSignIn(s.Dashboard)
		for _, p := range dashboard.Patterns {
			s.mux.Handle(p, d)
		}
	}
}

// limitSignIn counts the dashboard's unauthenticated form posts (log in,
// two-factor code, sign up) against the same per-IP budget as the API's
// public routes; the rest of the dashboard acts as a signed-in user.
func (s *Server) limitSignIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && (r.URL.Path == "/app/login" || r.URL.Path == "/app/login/2fa" || r.URL.Path == "/app/signup") {
			if err := s.Rates.limitByIP(w, r, app.ClassOther); err != nil {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(http.StatusTooManyRequests)
				w.Write([]byte("Too many attempts from your address. Wait a minute, then go back and try again.\n"))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
