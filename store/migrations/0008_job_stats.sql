-- Generation history for analytics, per team, UTC hour, template, status and
-- format. Job records are purged after 7 (completed) or 30 (failed) days;
-- these counters are not, so 90-day and 1-year analytics stay right, and a
-- query reads a few thousand rows instead of every job.

CREATE TABLE job_stats (
	team_id        TEXT NOT NULL,
	slot           INTEGER NOT NULL, -- unix time / 3600 of the job's creation
	template_id    TEXT NOT NULL,
	status         TEXT NOT NULL,    -- completed or failed
	format         TEXT NOT NULL,
	count          INTEGER NOT NULL,
	duration_sum   INTEGER NOT NULL,
	duration_count INTEGER NOT NULL,
	PRIMARY KEY (team_id, slot, template_id, status, format)
) WITHOUT ROWID;

INSERT INTO job_stats (team_id, slot, template_id, status, format, count, duration_sum, duration_count)
SELECT team_id, created_at / 3600000, template_id, status, format, COUNT(*), COALESCE(SUM(duration_ms), 0), COUNT(duration_ms)
FROM jobs WHERE status IN ('completed', 'failed') GROUP BY 1, 2, 3, 4, 5;
