-- Webhook subscriptions, the event outbox and delivery history.

CREATE TABLE webhook_subscriptions (
	id          TEXT PRIMARY KEY,
	team_id     TEXT NOT NULL REFERENCES teams(id),
	url         TEXT NOT NULL,
	events      TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	enabled     INTEGER NOT NULL,
	secret      TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
);
CREATE INDEX webhook_subscriptions_team ON webhook_subscriptions(team_id, created_at);

-- Events are written in the transaction that ends a job or batch, so none is
-- lost; dispatch turns them into deliveries.
CREATE TABLE events (
	id         TEXT PRIMARY KEY,
	team_id    TEXT NOT NULL,
	type       TEXT NOT NULL,
	payload    TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	dispatched INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX events_undispatched ON events(created_at) WHERE dispatched = 0;

CREATE TABLE webhook_deliveries (
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
	response_time_ms INTEGER,
	error            TEXT NOT NULL DEFAULT '',
	attempted_at     INTEGER,
	next_retry_at    INTEGER,
	created_at       INTEGER NOT NULL,
	UNIQUE (event_id, subscription_id)
);
CREATE INDEX webhook_deliveries_sub ON webhook_deliveries(subscription_id, created_at);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries(status) WHERE status = 'pending';
