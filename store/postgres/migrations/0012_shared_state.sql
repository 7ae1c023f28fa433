-- Step 12: what the embedded install keeps per process or in --data,
-- shared here by every replica (docs/decisions.md, "PostgreSQL: shared
-- rate limits, keys and the janitor").

-- Rate-limit windows and login throttles: one row per limiter ('api',
-- 'auth'), key and fixed window, counted by one upsert per call. A call
-- reads the previous window's row and counts in the current one's. Rows
-- stop counting two windows after their start (expires_at) and are
-- swept. UNLOGGED: no WAL per request; a crash of PostgreSQL (not a
-- clean restart) empties the table, which forgets at most two windows of
-- counts, as the embedded mode forgets up to 2 seconds of them. The
-- update changes no indexed column, and the free space left in each page
-- (fillfactor) lets it stay on the row's page (a HOT update).
CREATE UNLOGGED TABLE rate_windows (
	limiter    TEXT COLLATE "C" NOT NULL,
	key        TEXT COLLATE "C" NOT NULL,
	start      BIGINT NOT NULL,  -- Unix ms
	calls      INTEGER NOT NULL, -- counted in the window
	admitted   BOOLEAN NOT NULL, -- the last counted call's decision
	expires_at BIGINT NOT NULL,  -- start + 2 windows, Unix ms
	PRIMARY KEY (limiter, key, start)
) WITH (fillfactor = 70);
CREATE INDEX rate_windows_expiry ON rate_windows(expires_at);

-- The server's keys (jwt, download, signing: 32 random bytes each, the
-- files keys/*.key of an embedded install), created by the first replica
-- that needs one; every replica reads the same.
CREATE TABLE secrets (
	name       TEXT PRIMARY KEY,
	value      BYTEA NOT NULL,
	created_at BIGINT NOT NULL
);

-- When each periodic task (the janitor's pass) last began, so that one
-- replica runs it per interval, under an advisory lock.
CREATE TABLE task_runs (
	name       TEXT PRIMARY KEY,
	started_at BIGINT NOT NULL
);
