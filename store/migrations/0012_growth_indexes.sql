-- Indexes for a long history (issue 19): every statement a request, a job
-- or the janitor runs finds its rows through an index, so none grows with
-- a team's history (store/explain.go checks the plans in the tests).

-- A team's jobs by status and template, newest first (the filtered list).
CREATE INDEX jobs_team_status_template ON jobs(team_id, status, template_id, created_at);
-- A team's jobs that ended since a time (queue stats' last hour).
CREATE INDEX jobs_team_ended ON jobs(team_id, status, completed_at);
-- Analytics read job_stats since 0008: nothing reads this one any more,
-- and every job paid for it three times.
DROP INDEX jobs_team_analytics;

-- Documents a key generated, counted as each completes: counting its
-- jobs grew with its history. Those already recorded are counted once, in
-- one pass over the completed jobs (a count per key read them all per key).
ALTER TABLE api_keys ADD COLUMN documents INTEGER NOT NULL DEFAULT 0;
UPDATE api_keys SET documents = c.n
	FROM (SELECT api_key_id, COUNT(*) AS n FROM jobs WHERE status = 'completed' AND api_key_id != '' GROUP BY api_key_id) AS c
	WHERE c.api_key_id = api_keys.id;
DROP INDEX jobs_key;

-- Ended batches by age (the batch cleanup).
CREATE INDEX batches_ended ON batches(completed_at) WHERE status != 'processing';

-- Webhook history by age (its sweep), and a team's deliveries that ended
-- recently (dashboard health).
CREATE INDEX events_created ON events(created_at);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries(created_at);
CREATE INDEX webhook_deliveries_team_attempted ON webhook_deliveries(team_id, attempted_at, status);

-- Sessions idle too long (the janitor's session sweep); a user's refresh
-- tokens (revoked together), mail tokens (erased with the account) and the
-- keys a user made (deactivated with the account).
CREATE INDEX sessions_seen ON sessions(last_seen_at);
CREATE INDEX refresh_tokens_user ON refresh_tokens(user_id);
CREATE INDEX email_tokens_user ON email_tokens(user_id);
CREATE INDEX api_keys_creator ON api_keys(created_by);

-- Analytics by day: job_stats counts by hour (and stays exact for the
-- partial first and last day of a period), job_stats_daily by UTC day
-- (a year reads 365 rows a template instead of 8,760), job_hours by hour
-- for every template at once (the busiest hours of 30 days). FinishJob
-- counts a job in all three; here they are filled from job_stats.
CREATE TABLE job_stats_daily (
	team_id        TEXT NOT NULL,
	day            INTEGER NOT NULL, -- unix time / 86400 of the job's creation
	template_id    TEXT NOT NULL,
	status         TEXT NOT NULL,
	format         TEXT NOT NULL,
	count          INTEGER NOT NULL,
	duration_sum   INTEGER NOT NULL,
	duration_count INTEGER NOT NULL,
	PRIMARY KEY (team_id, day, template_id, status, format)
) WITHOUT ROWID;
INSERT INTO job_stats_daily (team_id, day, template_id, status, format, count, duration_sum, duration_count)
SELECT team_id, slot / 24, template_id, status, format, SUM(count), SUM(duration_sum), SUM(duration_count)
FROM job_stats GROUP BY 1, 2, 3, 4, 5;

CREATE TABLE job_hours (
	team_id TEXT NOT NULL,
	slot    INTEGER NOT NULL, -- unix time / 3600 of the job's creation
	count   INTEGER NOT NULL,
	PRIMARY KEY (team_id, slot)
) WITHOUT ROWID;
INSERT INTO job_hours (team_id, slot, count) SELECT team_id, slot, SUM(count) FROM job_stats GROUP BY 1, 2;
