-- Retention pays the triggers' bookkeeping once per step, not once per
-- row (issue 19, docs/decisions.md "Maintenance steps: bookkeeping once a
-- step").
--
-- The delete triggers on jobs (batch_job_delete, 0017: one UPDATE of the
-- batch a row; jobs_list_delete, 0019: an UPDATE and a DELETE of
-- job_list_hours a row) made a retention pass over 1M jobs spend three
-- statements per deleted row. A retention step (store/maintain.go,
-- purgeJobStep) now does that bookkeeping itself with one grouped
-- statement per table for all the rows it deletes, and the two triggers
-- skip while step_bookkeeping holds a row. The step inserts that row and
-- deletes it again inside its own write transaction, so no other
-- transaction ever sees it: every other deleter (a request's DELETE, the
-- sqlite3 shell) runs the triggers as before.
CREATE TABLE step_bookkeeping (on_step INTEGER PRIMARY KEY);

DROP TRIGGER jobs_list_delete;
CREATE TRIGGER jobs_list_delete AFTER DELETE ON jobs
WHEN NOT EXISTS (SELECT 1 FROM step_bookkeeping)
BEGIN
	UPDATE job_list_hours SET n = n - 1 WHERE team_id = OLD.team_id AND slot = OLD.created_at / 3600000;
	DELETE FROM job_list_hours WHERE team_id = OLD.team_id AND slot = OLD.created_at / 3600000 AND n <= 0;
END;

DROP TRIGGER batch_job_delete;
CREATE TRIGGER batch_job_delete AFTER DELETE ON jobs
WHEN OLD.batch_id != '' AND NOT EXISTS (SELECT 1 FROM step_bookkeeping)
BEGIN
	UPDATE batches SET version = version + 1,
		states = CASE WHEN OLD.batch_seq IS NULL OR states IS NULL OR OLD.batch_seq >= length(states) THEN states
			ELSE substr(states, 1, OLD.batch_seq) || '-' || substr(states, OLD.batch_seq + 2) END
	WHERE id = OLD.batch_id;
END;

-- Dashboard insights from roll-ups (issue 19). Insights (30 days: the
-- most used and the slowest templates) read job_stats and job_stats_daily,
-- a row per template, status and format of each hour or day, and joined
-- each row to its template before grouping. These count a team's ended
-- jobs by template alone (failed ones beside), by UTC day and hour of
-- creation: FinishJob adds to them in its transaction (countJob), they
-- outlive retention like job_stats, and the backfill of a database with
-- counters from before this migration fills them after start-up from
-- job_stats_daily and job_stats (store/rollup.go, 'templates'); until it
-- is done insights read the older tables.
CREATE TABLE job_template_days (
	team_id        TEXT NOT NULL,
	day            INTEGER NOT NULL, -- unix time / 86400 of the job's creation
	template_id    TEXT NOT NULL,
	count          INTEGER NOT NULL,
	failed         INTEGER NOT NULL,
	duration_sum   INTEGER NOT NULL,
	duration_count INTEGER NOT NULL,
	PRIMARY KEY (team_id, day, template_id)
) WITHOUT ROWID;
CREATE TABLE job_template_hours (
	team_id        TEXT NOT NULL,
	slot           INTEGER NOT NULL, -- unix time / 3600 of the job's creation
	template_id    TEXT NOT NULL,
	count          INTEGER NOT NULL,
	failed         INTEGER NOT NULL,
	duration_sum   INTEGER NOT NULL,
	duration_count INTEGER NOT NULL,
	PRIMARY KEY (team_id, slot, template_id)
) WITHOUT ROWID;
INSERT INTO rollup_backfill (name, done) VALUES ('templates', NOT EXISTS (SELECT 1 FROM job_stats));
