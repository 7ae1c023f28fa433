-- Step 10: jobs, batches, documents kept in the database, monthly usage,
-- the analytics roll-ups, and the event outbox that FinishJob writes in
-- its transaction (docs/decisions.md, "PostgreSQL: jobs, batches, usage
-- and analytics"). Columns mirror SQLite's migrations 0001-0026 so both
-- backends hand app the same values; seq stands in for SQLite's rowid
-- (lists break ties by insertion order).
--
-- Merging note: webhook_subscriptions and events are created here
-- because a job's end stores the events its team's enabled subscriptions
-- ask for, in the same transaction; the webhook store's migration must
-- not create them again.

CREATE TABLE jobs (
	seq              BIGINT GENERATED ALWAYS AS IDENTITY,
	id               TEXT PRIMARY KEY,
	team_id          TEXT NOT NULL REFERENCES teams(id),
	template_id      TEXT COLLATE "C" NOT NULL,
	batch_id         TEXT NOT NULL DEFAULT '',
	batch_seq        INTEGER, -- the job's index in its batch's states
	status           TEXT NOT NULL,
	format           TEXT NOT NULL,
	filename         TEXT NOT NULL DEFAULT '',
	metadata         TEXT,
	variables        TEXT,
	priority         INTEGER NOT NULL,
	error            TEXT NOT NULL DEFAULT '',
	error_code       TEXT NOT NULL DEFAULT '',
	error_info       TEXT,
	file_path        TEXT NOT NULL DEFAULT '',
	file_size        BIGINT NOT NULL DEFAULT 0,
	api_key_id       TEXT NOT NULL DEFAULT '',
	created_by       TEXT NOT NULL DEFAULT '',
	attempts         INTEGER NOT NULL DEFAULT 0,
	crashes          INTEGER NOT NULL DEFAULT 0,
	created_at       BIGINT NOT NULL,
	started_at       BIGINT,
	completed_at     BIGINT,
	expires_at       BIGINT,
	duration_ms      BIGINT,
	template_version INTEGER,
	request_id       TEXT NOT NULL DEFAULT '',
	locale           TEXT NOT NULL DEFAULT '',
	pdf_options      TEXT NOT NULL DEFAULT '',
	charged          TEXT NOT NULL DEFAULT '', -- '', 'quota' or 'credits'
	charge_month     TEXT NOT NULL DEFAULT ''
);
-- Lists newest first (created_at DESC, seq DESC), by each filter.
CREATE INDEX jobs_team_created ON jobs(team_id, created_at, seq);
CREATE INDEX jobs_team_status ON jobs(team_id, status, created_at, seq);
CREATE INDEX jobs_team_template ON jobs(team_id, template_id, created_at, seq);
CREATE INDEX jobs_team_status_template ON jobs(team_id, status, template_id, created_at, seq);
-- Queue figures' last hour, the start-up reconciliation, retention.
CREATE INDEX jobs_team_ended ON jobs(team_id, status, completed_at);
CREATE INDEX jobs_unfinished ON jobs(created_at) WHERE status IN ('pending', 'processing');
CREATE INDEX jobs_batch ON jobs(batch_id, seq) WHERE batch_id != '';
CREATE INDEX jobs_expires ON jobs(expires_at) WHERE file_path != '';
CREATE INDEX jobs_completed_at ON jobs(status, completed_at);

-- A document up to app.DefaultInlineMax bytes, kept with its job's end.
CREATE TABLE job_files (
	job_id TEXT PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
	data   BYTEA NOT NULL
);

CREATE TABLE batches (
	seq          BIGINT GENERATED ALWAYS AS IDENTITY,
	id           TEXT PRIMARY KEY,
	team_id      TEXT NOT NULL REFERENCES teams(id),
	template_id  TEXT NOT NULL,
	format       TEXT NOT NULL,
	status       TEXT NOT NULL,
	total        INTEGER NOT NULL,
	completed    INTEGER NOT NULL DEFAULT 0,
	failed       INTEGER NOT NULL DEFAULT 0,
	created_at   BIGINT NOT NULL,
	completed_at BIGINT,
	-- version rises with each change of one of its jobs; states holds a
	-- character per document (p r c f -), as SQLite's 0017.
	version      BIGINT NOT NULL DEFAULT 0,
	states       TEXT
);
CREATE INDEX batches_team_created ON batches(team_id, created_at);
CREATE INDEX batches_ended ON batches(completed_at, seq) WHERE status != 'processing';

-- A batch's version and states follow its jobs' statuses and deletions,
-- by triggers as in SQLite, so no write path can forget them.
CREATE FUNCTION batch_job_state() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	j jobs;
	c TEXT;
BEGIN
	IF TG_OP = 'DELETE' THEN
		j := OLD;
		c := '-';
	ELSE
		j := NEW;
		c := CASE NEW.status WHEN 'pending' THEN 'p' WHEN 'processing' THEN 'r' WHEN 'completed' THEN 'c' WHEN 'failed' THEN 'f' ELSE '?' END;
	END IF;
	UPDATE batches SET version = version + 1,
		states = CASE WHEN j.batch_seq IS NULL OR states IS NULL OR j.batch_seq >= length(states) THEN states
			ELSE overlay(states PLACING c FROM j.batch_seq + 1 FOR 1) END
	WHERE id = j.batch_id;
	RETURN NULL;
END
$$;
CREATE TRIGGER batch_job_status AFTER UPDATE OF status ON jobs
	FOR EACH ROW WHEN (NEW.batch_id != '' AND NEW.status IS DISTINCT FROM OLD.status) EXECUTE FUNCTION batch_job_state();
CREATE TRIGGER batch_job_delete AFTER DELETE ON jobs
	FOR EACH ROW WHEN (OLD.batch_id != '') EXECUTE FUNCTION batch_job_state();

-- Monthly usage per team; how each job was paid is on its row.
CREATE TABLE usage (
	team_id      TEXT NOT NULL,
	month        TEXT COLLATE "C" NOT NULL, -- YYYY-MM, UTC
	documents    BIGINT NOT NULL DEFAULT 0,
	credits_used BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (team_id, month)
);

-- Roll-ups: a team's ended jobs counted by UTC hour or day of creation,
-- written by count_job in the transaction that ends the job. They outlive
-- the job rows (retention), so a year of analytics stays exact.
CREATE TABLE job_stats (
	team_id        TEXT NOT NULL,
	slot           BIGINT NOT NULL, -- unix time / 3600 of the job's creation
	template_id    TEXT COLLATE "C" NOT NULL,
	status         TEXT NOT NULL,
	format         TEXT NOT NULL,
	count          BIGINT NOT NULL,
	duration_sum   BIGINT NOT NULL,
	duration_count BIGINT NOT NULL,
	PRIMARY KEY (team_id, slot, template_id, status, format)
);
CREATE TABLE job_stats_daily (
	team_id        TEXT NOT NULL,
	day            BIGINT NOT NULL, -- unix time / 86400 of the job's creation
	template_id    TEXT COLLATE "C" NOT NULL,
	status         TEXT NOT NULL,
	format         TEXT NOT NULL,
	count          BIGINT NOT NULL,
	duration_sum   BIGINT NOT NULL,
	duration_count BIGINT NOT NULL,
	PRIMARY KEY (team_id, day, template_id, status, format)
);
CREATE TABLE job_team_hours (
	team_id        TEXT NOT NULL,
	slot           BIGINT NOT NULL,
	status         TEXT NOT NULL,
	format         TEXT NOT NULL,
	count          BIGINT NOT NULL,
	duration_sum   BIGINT NOT NULL,
	duration_count BIGINT NOT NULL,
	PRIMARY KEY (team_id, slot, status, format)
);
CREATE TABLE job_team_days (
	team_id        TEXT NOT NULL,
	day            BIGINT NOT NULL,
	status         TEXT NOT NULL,
	format         TEXT NOT NULL,
	count          BIGINT NOT NULL,
	duration_sum   BIGINT NOT NULL,
	duration_count BIGINT NOT NULL,
	PRIMARY KEY (team_id, day, status, format)
);
CREATE TABLE job_hours (
	team_id TEXT NOT NULL,
	slot    BIGINT NOT NULL,
	count   BIGINT NOT NULL,
	PRIMARY KEY (team_id, slot)
);
CREATE TABLE job_template_hours (
	team_id        TEXT NOT NULL,
	slot           BIGINT NOT NULL,
	template_id    TEXT COLLATE "C" NOT NULL,
	count          BIGINT NOT NULL,
	failed         BIGINT NOT NULL,
	duration_sum   BIGINT NOT NULL,
	duration_count BIGINT NOT NULL,
	PRIMARY KEY (team_id, slot, template_id)
);
CREATE TABLE job_template_days (
	team_id        TEXT NOT NULL,
	day            BIGINT NOT NULL,
	template_id    TEXT COLLATE "C" NOT NULL,
	count          BIGINT NOT NULL,
	failed         BIGINT NOT NULL,
	duration_sum   BIGINT NOT NULL,
	duration_count BIGINT NOT NULL,
	PRIMARY KEY (team_id, day, template_id)
);

-- count_job counts one ended job in the seven roll-ups (SQLite's view
-- job_count, 0026): one statement from Go. The upserts take their rows in
-- the same order in every transaction, so two jobs ending at once queue
-- on a shared row instead of deadlocking.
CREATE FUNCTION count_job(p_team TEXT, p_slot BIGINT, p_template TEXT, p_status TEXT, p_format TEXT, p_dur BIGINT, p_n BIGINT)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	f BIGINT := CASE WHEN p_status = 'failed' THEN 1 ELSE 0 END;
BEGIN
	INSERT INTO job_stats AS s VALUES (p_team, p_slot, p_template, p_status, p_format, 1, p_dur, p_n)
		ON CONFLICT (team_id, slot, template_id, status, format) DO UPDATE SET count = s.count + 1,
			duration_sum = s.duration_sum + p_dur, duration_count = s.duration_count + p_n;
	INSERT INTO job_stats_daily AS s VALUES (p_team, p_slot / 24, p_template, p_status, p_format, 1, p_dur, p_n)
		ON CONFLICT (team_id, day, template_id, status, format) DO UPDATE SET count = s.count + 1,
			duration_sum = s.duration_sum + p_dur, duration_count = s.duration_count + p_n;
	INSERT INTO job_team_hours AS s VALUES (p_team, p_slot, p_status, p_format, 1, p_dur, p_n)
		ON CONFLICT (team_id, slot, status, format) DO UPDATE SET count = s.count + 1,
			duration_sum = s.duration_sum + p_dur, duration_count = s.duration_count + p_n;
	INSERT INTO job_team_days AS s VALUES (p_team, p_slot / 24, p_status, p_format, 1, p_dur, p_n)
		ON CONFLICT (team_id, day, status, format) DO UPDATE SET count = s.count + 1,
			duration_sum = s.duration_sum + p_dur, duration_count = s.duration_count + p_n;
	INSERT INTO job_hours AS s VALUES (p_team, p_slot, 1)
		ON CONFLICT (team_id, slot) DO UPDATE SET count = s.count + 1;
	INSERT INTO job_template_hours AS s VALUES (p_team, p_slot, p_template, 1, f, p_dur, p_n)
		ON CONFLICT (team_id, slot, template_id) DO UPDATE SET count = s.count + 1, failed = s.failed + f,
			duration_sum = s.duration_sum + p_dur, duration_count = s.duration_count + p_n;
	INSERT INTO job_template_days AS s VALUES (p_team, p_slot / 24, p_template, 1, f, p_dur, p_n)
		ON CONFLICT (team_id, day, template_id) DO UPDATE SET count = s.count + 1, failed = s.failed + f,
			duration_sum = s.duration_sum + p_dur, duration_count = s.duration_count + p_n;
END
$$;

-- Webhook subscriptions and the event outbox, as SQLite's 0005 and 0009.
CREATE TABLE webhook_subscriptions (
	seq         BIGINT GENERATED ALWAYS AS IDENTITY,
	id          TEXT PRIMARY KEY,
	team_id     TEXT NOT NULL REFERENCES teams(id),
	url         TEXT NOT NULL,
	events      TEXT NOT NULL, -- JSON array of event types
	description TEXT NOT NULL DEFAULT '',
	enabled     BOOLEAN NOT NULL,
	secret      TEXT NOT NULL,
	created_at  BIGINT NOT NULL,
	updated_at  BIGINT NOT NULL
);
CREATE INDEX webhook_subscriptions_team ON webhook_subscriptions(team_id, created_at, seq);

CREATE TABLE events (
	seq        BIGINT GENERATED ALWAYS AS IDENTITY,
	id         TEXT PRIMARY KEY,
	team_id    TEXT NOT NULL,
	type       TEXT NOT NULL,
	payload    TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	dispatched BOOLEAN NOT NULL DEFAULT false,
	request_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX events_undispatched ON events(created_at, seq) WHERE NOT dispatched;
CREATE INDEX events_created ON events(created_at);
