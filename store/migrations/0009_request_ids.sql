-- The X-Request-Id of the request that queued a job, raised an event or
-- caused a webhook delivery, so the worker's and the deliverer's log lines
-- can be joined to the access log (docs/decisions.md, Operations). Rows
-- written before this migration have none.

ALTER TABLE jobs ADD COLUMN request_id TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN request_id TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_deliveries ADD COLUMN request_id TEXT NOT NULL DEFAULT '';
