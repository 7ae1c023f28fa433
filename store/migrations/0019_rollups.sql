-- Roll-ups for the reads that grew with a team's volume (issue 19,
-- docs/decisions.md "Roll-ups for dashboard health, insights and
-- analytics").
--
-- job_team_hours and job_team_days count a team's ended jobs by UTC hour
-- or day of creation, status and format, without the template: analytics
-- of a whole team read a few rows an hour instead of one per template.
-- FinishJob counts a job in them as in job_stats (countJob); like
-- job_stats they outlive the job rows, so retention changes no figure.
CREATE TABLE job_team_hours (
	team_id        TEXT NOT NULL,
	slot           INTEGER NOT NULL, -- unix time / 3600 of the job's creation
	status         TEXT NOT NULL,
	format         TEXT NOT NULL,
	count          INTEGER NOT NULL,
	duration_sum   INTEGER NOT NULL,
	duration_count INTEGER NOT NULL,
	PRIMARY KEY (team_id, slot, status, format)
) WITHOUT ROWID;

CREATE TABLE job_team_days (
	team_id        TEXT NOT NULL,
	day            INTEGER NOT NULL, -- unix time / 86400 of the job's creation
	status         TEXT NOT NULL,
	format         TEXT NOT NULL,
	count          INTEGER NOT NULL,
	duration_sum   INTEGER NOT NULL,
	duration_count INTEGER NOT NULL,
	PRIMARY KEY (team_id, day, status, format)
) WITHOUT ROWID;

-- Ended webhook deliveries (success or failed) by team, UTC hour of their
-- last attempt and status: dashboard health's last 24 hours read 24 rows
-- a status and the live rows of the two partial hours at its ends. Every
-- change of a delivery's status or attempt time moves it between them
-- (store/webhook.go, countDelivery).
CREATE TABLE delivery_hours (
	team_id TEXT NOT NULL,
	slot    INTEGER NOT NULL, -- unix time / 3600 of attempted_at
	status  TEXT NOT NULL,    -- success or failed
	count   INTEGER NOT NULL,
	PRIMARY KEY (team_id, slot, status)
) WITHOUT ROWID;

-- A team's job rows (any status) by UTC hour of creation, for deep pages
-- of the jobs list: page 1,000 of 100 finds the hour holding its first row
-- from these counts and skips only that hour's rows, not 99,900. Kept by
-- triggers, so every insert and delete of a job row (requests, retention,
-- a team's deletion) keeps it exact in its own transaction; an hour with
-- no rows left goes.
CREATE TABLE job_list_hours (
	team_id TEXT NOT NULL,
	slot    INTEGER NOT NULL, -- unix time / 3600 of the job's creation
	n       INTEGER NOT NULL,
	PRIMARY KEY (team_id, slot)
) WITHOUT ROWID;
CREATE TRIGGER jobs_list_insert AFTER INSERT ON jobs BEGIN
	INSERT INTO job_list_hours (team_id, slot, n) VALUES (NEW.team_id, NEW.created_at / 3600000, 1)
		ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER jobs_list_delete AFTER DELETE ON jobs BEGIN
	UPDATE job_list_hours SET n = n - 1 WHERE team_id = OLD.team_id AND slot = OLD.created_at / 3600000;
	DELETE FROM job_list_hours WHERE team_id = OLD.team_id AND slot = OLD.created_at / 3600000 AND n <= 0;
END;

-- The backfill of the tables above from what existed before this
-- migration runs after start-up in short transactions (store/rollup.go),
-- from a cursor (team_id, slot: hours; days for jobs) kept here; reads
-- use the old tables until done. A database with nothing to fill is done
-- at once.
CREATE TABLE rollup_backfill (
	name    TEXT PRIMARY KEY, -- jobs, deliveries or list
	team_id TEXT NOT NULL DEFAULT '',
	slot    INTEGER NOT NULL DEFAULT -1,
	rows    INTEGER NOT NULL DEFAULT 0, -- source rows read so far
	done    INTEGER NOT NULL
);
INSERT INTO rollup_backfill (name, done) VALUES
	('jobs', NOT EXISTS (SELECT 1 FROM job_stats)),
	('deliveries', NOT EXISTS (SELECT 1 FROM webhook_deliveries)),
	('list', NOT EXISTS (SELECT 1 FROM jobs));
