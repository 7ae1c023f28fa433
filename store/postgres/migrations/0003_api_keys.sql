-- Step 3: API keys. permissions is a JSON array kept as text, as in SQLite,
-- so both backends hand app the same bytes.

CREATE TABLE api_keys (
	seq            BIGINT GENERATED ALWAYS AS IDENTITY,
	id             TEXT PRIMARY KEY,
	team_id        TEXT NOT NULL REFERENCES teams(id),
	name           TEXT COLLATE "C" NOT NULL,
	key_type       TEXT NOT NULL,
	key_prefix     TEXT NOT NULL,
	hash           TEXT NOT NULL UNIQUE,
	permissions    TEXT NOT NULL,
	is_active      BOOLEAN NOT NULL,
	created_by     TEXT NOT NULL,
	last_used_at   BIGINT,
	total_requests BIGINT NOT NULL DEFAULT 0,
	requests_today BIGINT NOT NULL DEFAULT 0,
	requests_day   TEXT COLLATE "C" NOT NULL DEFAULT '',
	-- documents counts the completed documents generated with the key
	-- (FinishJob), so the count outlives the janitor's purges.
	documents      BIGINT NOT NULL DEFAULT 0,
	created_at     BIGINT NOT NULL,
	updated_at     BIGINT NOT NULL
);
CREATE INDEX api_keys_team ON api_keys(team_id, created_at);
CREATE INDEX api_keys_creator ON api_keys(created_by);
