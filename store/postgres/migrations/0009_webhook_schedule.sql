-- Step 9: the webhook attempt schedule, shared by every replica. An entry
-- is keyed by its due time and delivery, so scheduling the same attempt
-- twice keeps one; it is claimable when due and its lease is absent or
-- past, and a lease names its owner, as the job queue's do (0004).

CREATE TABLE webhook_schedule (
	due             BIGINT NOT NULL, -- Unix ms
	delivery_id     TEXT COLLATE "C" NOT NULL,
	subscription_id TEXT NOT NULL DEFAULT '',
	attempt         INTEGER NOT NULL,
	lease_until     BIGINT,
	lease_owner     TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (due, delivery_id)
);
CREATE INDEX webhook_schedule_delivery ON webhook_schedule(delivery_id);
