-- Batches, generation timing, and indexes for job lists and analytics.

CREATE TABLE batches (
	id           TEXT PRIMARY KEY,
	team_id      TEXT NOT NULL REFERENCES teams(id),
	template_id  TEXT NOT NULL,
	format       TEXT NOT NULL,
	status       TEXT NOT NULL,
	total        INTEGER NOT NULL,
	completed    INTEGER NOT NULL DEFAULT 0,
	failed       INTEGER NOT NULL DEFAULT 0,
	created_at   INTEGER NOT NULL,
	completed_at INTEGER
);
CREATE INDEX batches_team_created ON batches(team_id, created_at);

ALTER TABLE jobs ADD COLUMN duration_ms INTEGER;

-- Covering index for analytics by team and date.
CREATE INDEX jobs_team_analytics ON jobs(team_id, created_at, status, format, template_id, duration_ms);
CREATE INDEX jobs_batch ON jobs(batch_id) WHERE batch_id != '';
-- Retention sweeps.
CREATE INDEX jobs_expires ON jobs(expires_at) WHERE file_path != '';
CREATE INDEX jobs_completed_at ON jobs(status, completed_at);
