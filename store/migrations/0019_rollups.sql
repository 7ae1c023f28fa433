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

-- The backfill of the tables above from what existed before this
-- migration runs after start-up in short transactions (store/rollup.go),
-- from a cursor (team_id, slot: hours; days for jobs) kept here; reads
-- use the old tables until done. A database with nothing to fill is done
-- at once.
CREATE TABLE rollup_backfill (
	name    TEXT PRIMARY KEY, -- jobs or deliveries
	team_id TEXT NOT NULL DEFAULT '',
	slot    INTEGER NOT NULL DEFAULT -1,
	rows    INTEGER NOT NULL DEFAULT 0, -- source rows read so far
	done    INTEGER NOT NULL
);
INSERT INTO rollup_backfill (name, done) VALUES
	('jobs', NOT EXISTS (SELECT 1 FROM job_stats)),
	('deliveries', NOT EXISTS (SELECT 1 FROM webhook_deliveries));
