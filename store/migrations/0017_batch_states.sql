-- Batch polls in O(1) (issue 24). A poll of a batch read every one of its
-- jobs; now it reads the batch row alone:
--
-- - batches.version rises in the transaction that changes the status of
--   one of its jobs or deletes one, so an unchanged version means an
--   unchanged documents list (the server caches the list per version and
--   answers If-None-Match with 304);
-- - batches.states holds one character per document, in request order:
--   p pending, r processing, c completed, f failed, - deleted. A poll finds
--   in it which documents changed since the version it has cached and reads
--   only the jobs that ended (once each);
-- - jobs.batch_seq is a job's index in states.
--
-- Triggers rather than Go code, so no write path (start, release, finish,
-- delete, retention, and whatever replaces them) can forget it. Only ALTER
-- TABLE ADD COLUMN and CREATE TRIGGER: no table is rewritten, so the
-- migration takes the same time on 10M jobs as on none. Batches created
-- before it keep states NULL (and their jobs batch_seq NULL): their polls
-- read the batch's jobs when the version changed, and the version still
-- rises with each change, so their list is cached between changes too.

ALTER TABLE batches ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE batches ADD COLUMN states TEXT;
ALTER TABLE jobs ADD COLUMN batch_seq INTEGER;

CREATE TRIGGER batch_job_status AFTER UPDATE OF status ON jobs
WHEN NEW.batch_id != '' AND NEW.status IS NOT OLD.status
BEGIN
	UPDATE batches SET version = version + 1,
		states = CASE WHEN NEW.batch_seq IS NULL OR states IS NULL OR NEW.batch_seq >= length(states) THEN states
			ELSE substr(states, 1, NEW.batch_seq) ||
				CASE NEW.status WHEN 'pending' THEN 'p' WHEN 'processing' THEN 'r' WHEN 'completed' THEN 'c' WHEN 'failed' THEN 'f' ELSE '?' END ||
				substr(states, NEW.batch_seq + 2) END
	WHERE id = NEW.batch_id;
END;

CREATE TRIGGER batch_job_delete AFTER DELETE ON jobs
WHEN OLD.batch_id != ''
BEGIN
	UPDATE batches SET version = version + 1,
		states = CASE WHEN OLD.batch_seq IS NULL OR states IS NULL OR OLD.batch_seq >= length(states) THEN states
			ELSE substr(states, 1, OLD.batch_seq) || '-' || substr(states, OLD.batch_seq + 2) END
	WHERE id = OLD.batch_id;
END;
