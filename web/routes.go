package web

// routes lists every route: METHOD /path, who may call it, and its handler.
func (s *Server) routes() {
	// Authentication (DESIGN.md section 3).
	s.handle("POST /api/auth/signup", public, s.handleSignup)
	s.handle("POST /api/auth/login", public, s.handleLogin)
	s.handle("POST /api/auth/refresh", public, s.handleRefresh)
	s.handle("POST /api/auth/logout", public, s.handleLogout)
	s.handle("POST /api/auth/verify-email", public, s.handleVerifyEmail)
	s.handle("POST /api/auth/resend-verification", jwtOnly, s.handleResendVerification)

	// Users.
	s.handle("GET /api/users/me", jwtOnly, s.handleMe)

	// API keys (JWT only).
	s.handle("POST /api/api-keys", jwtOnly, s.handleCreateKey)
	s.handle("GET /api/api-keys", jwtOnly, s.handleListKeys)
	s.handle("GET /api/api-keys/{id}", jwtOnly, s.handleGetKey)
	s.handle("PATCH /api/api-keys/{id}", jwtOnly, s.handleUpdateKey)
	s.handle("POST /api/api-keys/{id}/revoke", jwtOnly, s.handleRevokeKey)
	s.handle("GET /api/api-keys/{id}/stats", jwtOnly, s.handleKeyStats)
	s.handle("DELETE /api/api-keys/{id}", jwtOnly, s.handleDeleteKey)

	// Templates: writes need a JWT, reads accept an API key.
	s.handle("POST /api/templates", jwtOnly, s.handleCreateTemplate)
	s.handle("GET /api/templates", anyAuth, s.handleListTemplates)
	s.handle("GET /api/templates/{id}", anyAuth, s.handleGetTemplate)
	s.handle("GET /api/v1/templates", anyAuth, s.handleListTemplates)
	s.handle("GET /api/v1/templates/{id}", anyAuth, s.handleGetTemplate)
	s.handle("GET /api/templates/{id}/analytics", anyAuth, s.handleTemplateAnalytics)
	s.handle("GET /api/v1/templates/{id}/analytics", anyAuth, s.handleTemplateAnalytics)

	// Documents.
	s.handle("POST /api/v1/documents/generate", anyAuth, s.handleGenerate)
	s.handle("GET /api/v1/documents/jobs", anyAuth, s.handleListJobs)
	s.handle("GET /api/v1/documents/jobs/{jobId}", anyAuth, s.handleGetJob)
	s.handle("GET /api/v1/documents/jobs/{jobId}/download", public, s.handleDownload)
	s.handle("POST /api/v1/documents/generate/batch", anyAuth, s.handleGenerateBatch)
	s.handle("GET /api/v1/documents/batches/{batchId}", anyAuth, s.handleGetBatch)
	s.handle("GET /api/v1/documents/jobs/export", anyAuth, s.handleExportJobs)
	s.handle("POST /api/v1/documents/jobs/{jobId}/retry", anyAuth, s.handleRetryJob)
	s.handle("POST /api/v1/documents/jobs/bulk/retry", anyAuth, s.handleRetryJobs)
	s.handle("DELETE /api/v1/documents/jobs/{jobId}", anyAuth, s.handleDeleteJob)
	s.handle("DELETE /api/v1/documents/jobs/bulk", anyAuth, s.handleDeleteJobs)
	s.handle("GET /api/v1/documents/queue/stats", anyAuth, s.handleQueueStats)
	s.handle("GET /api/v1/documents/analytics", anyAuth, s.handleDocumentAnalytics)
	s.handle("GET /api/v1/analytics/usage", anyAuth, s.handleUsage)
}
