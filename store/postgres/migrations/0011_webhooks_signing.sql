-- Step 11: webhook deliveries, the hourly counts of ended deliveries, and
-- teams' signing certificates. The same columns as SQLite's 0005, 0009,
-- 0012, 0019 and 0023 (store/internal/scan reads both). Subscriptions and
-- the event outbox are step 10's: the end of a job reads the one and
-- writes the other.

-- One delivery per event and subscription: a dispatch repeated by another
-- replica creates nothing new.
CREATE TABLE webhook_deliveries (
	seq              BIGINT GENERATED ALWAYS AS IDENTITY,
	id               TEXT PRIMARY KEY,
	subscription_id  TEXT NOT NULL,
	team_id          TEXT NOT NULL,
	event_id         TEXT NOT NULL,
	event            TEXT NOT NULL,
	payload          TEXT NOT NULL,
	status           TEXT NOT NULL,
	attempts         INTEGER NOT NULL DEFAULT 0,
	max_attempts     INTEGER NOT NULL,
	status_code      INTEGER,
	response_time_ms BIGINT,
	error            TEXT NOT NULL DEFAULT '',
	attempted_at     BIGINT,
	next_retry_at    BIGINT,
	created_at       BIGINT NOT NULL,
	request_id       TEXT NOT NULL DEFAULT '',
	CONSTRAINT webhook_deliveries_event_sub UNIQUE (event_id, subscription_id)
);
CREATE INDEX webhook_deliveries_sub ON webhook_deliveries(subscription_id, created_at, seq);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries(status) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_created ON webhook_deliveries(created_at);
CREATE INDEX webhook_deliveries_team_attempted ON webhook_deliveries(team_id, attempted_at, status);

-- Ended deliveries (success, failed) by team, hour of their last attempt
-- (Unix ms / 3600000) and status, kept in the transactions that change a
-- delivery (countDelivery); dashboard health reads it.
CREATE TABLE delivery_hours (
	team_id TEXT NOT NULL,
	slot    BIGINT NOT NULL,
	status  TEXT NOT NULL,
	count   BIGINT NOT NULL,
	PRIMARY KEY (team_id, slot, status)
);

-- sealed is the private key and chain as the SigningService sealed them
-- (AES-256-GCM, the row's id and team as additional data), byte for byte.
CREATE TABLE signing_certificates (
	id          TEXT COLLATE "C" PRIMARY KEY,
	team_id     TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
	name        TEXT COLLATE "C" NOT NULL,
	subject     TEXT NOT NULL,
	common_name TEXT NOT NULL,
	issuer      TEXT NOT NULL,
	serial      TEXT NOT NULL,
	not_before  BIGINT NOT NULL,
	not_after   BIGINT NOT NULL,
	fingerprint TEXT NOT NULL,
	key_type    TEXT NOT NULL,
	chain_size  INTEGER NOT NULL,
	sealed      BYTEA NOT NULL,
	created_by  TEXT NOT NULL,
	created_at  BIGINT NOT NULL,
	CONSTRAINT signing_certificates_team_name UNIQUE (team_id, name)
);
