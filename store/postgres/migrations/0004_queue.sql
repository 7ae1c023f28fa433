-- Step 4: the durable job queue, shared by every replica
-- (docs/decisions.md, PostgreSQL: the queue). An entry is claimable when
-- lease_until is NULL or past; a claim takes the first claimable entry by
-- (priority, seq) with FOR UPDATE SKIP LOCKED and writes its lease and the
-- claiming process (lease_owner); ack deletes the row.

CREATE TABLE queue_entries (
	seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	job_id      TEXT NOT NULL,
	priority    SMALLINT NOT NULL,
	lease_until BIGINT,             -- Unix ms; NULL: never claimed or released
	lease_owner TEXT NOT NULL DEFAULT '',
	created_at  BIGINT NOT NULL
);
CREATE INDEX queue_entries_order ON queue_entries(priority, seq);
CREATE INDEX queue_entries_lease ON queue_entries(lease_owner) WHERE lease_until IS NOT NULL;
