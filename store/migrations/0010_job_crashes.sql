-- How many runs of a job began and never ended: the process died while
-- rendering it (a poison job, docs/reliability.md). A graceful shutdown
-- returns a running job to pending, so only real crashes count. After
-- app.MaxJobCrashes the job fails instead of running again.

ALTER TABLE jobs ADD COLUMN crashes INTEGER NOT NULL DEFAULT 0;
