-- Ended jobs' counts wait in job_count_pending before the roll-ups (issue
-- 24, twelfth session, docs/decisions.md "Counts pending before the
-- roll-ups"): each write group inserts one row here, in the transaction
-- that ends its jobs, instead of the eight upserts of job_count's trigger
-- (0030); the writer folds the rows into the roll-ups through job_count at
-- most a second later, and before any read of the roll-ups or of the keys'
-- document counts. counts is a JSON array with an object per key:
-- {"t": team_id, "h": slot, "p": template_id, "s": status, "f": format,
-- "k": api_key_id, "n": count, "ds": duration_sum, "dc": duration_count}
-- (k, ds and dc left out when empty or 0).
CREATE TABLE job_count_pending (
	id     INTEGER PRIMARY KEY,
	counts TEXT NOT NULL
);
