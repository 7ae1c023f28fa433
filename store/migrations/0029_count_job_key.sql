-- The key's document count joins the ended job's counters (issue 24,
-- docs/decisions.md "Issue 24: CPU beyond render, second pass"): FinishJob
-- and RecordJob ran UPDATE api_keys SET documents = documents + 1 after
-- their insert into job_count, one more statement through database/sql
-- per document. The view gains the job's api_key_id and its trigger the
-- update; the seven upserts are 0026's, unchanged.
--
-- Merging note: a migration that rebuilds or renames one of the roll-up
-- tables of 0026 must create this trigger again (this file's version).
DROP TRIGGER job_count_insert;
DROP VIEW job_count;

CREATE VIEW job_count (team_id, slot, template_id, status, format, duration_sum, duration_count, api_key_id) AS
	SELECT '', 0, '', '', '', 0, 0, '' WHERE 0;

CREATE TRIGGER job_count_insert INSTEAD OF INSERT ON job_count BEGIN
	INSERT INTO job_stats (team_id, slot, template_id, status, format, count, duration_sum, duration_count)
		VALUES (NEW.team_id, NEW.slot, NEW.template_id, NEW.status, NEW.format, 1, NEW.duration_sum, NEW.duration_count)
		ON CONFLICT DO UPDATE SET count = count + 1,
			duration_sum = duration_sum + excluded.duration_sum, duration_count = duration_count + excluded.duration_count;
	INSERT INTO job_stats_daily (team_id, day, template_id, status, format, count, duration_sum, duration_count)
		VALUES (NEW.team_id, NEW.slot / 24, NEW.template_id, NEW.status, NEW.format, 1, NEW.duration_sum, NEW.duration_count)
		ON CONFLICT DO UPDATE SET count = count + 1,
			duration_sum = duration_sum + excluded.duration_sum, duration_count = duration_count + excluded.duration_count;
	INSERT INTO job_team_hours (team_id, slot, status, format, count, duration_sum, duration_count)
		VALUES (NEW.team_id, NEW.slot, NEW.status, NEW.format, 1, NEW.duration_sum, NEW.duration_count)
		ON CONFLICT DO UPDATE SET count = count + 1,
			duration_sum = duration_sum + excluded.duration_sum, duration_count = duration_count + excluded.duration_count;
	INSERT INTO job_team_days (team_id, day, status, format, count, duration_sum, duration_count)
		VALUES (NEW.team_id, NEW.slot / 24, NEW.status, NEW.format, 1, NEW.duration_sum, NEW.duration_count)
		ON CONFLICT DO UPDATE SET count = count + 1,
			duration_sum = duration_sum + excluded.duration_sum, duration_count = duration_count + excluded.duration_count;
	INSERT INTO job_hours (team_id, slot, count) VALUES (NEW.team_id, NEW.slot, 1)
		ON CONFLICT DO UPDATE SET count = count + 1;
	-- By template alone (0022, dashboard insights), failed counted apart.
	INSERT INTO job_template_hours (team_id, slot, template_id, count, failed, duration_sum, duration_count)
		VALUES (NEW.team_id, NEW.slot, NEW.template_id, 1, NEW.status = 'failed', NEW.duration_sum, NEW.duration_count)
		ON CONFLICT DO UPDATE SET count = count + 1, failed = failed + excluded.failed,
			duration_sum = duration_sum + excluded.duration_sum, duration_count = duration_count + excluded.duration_count;
	INSERT INTO job_template_days (team_id, day, template_id, count, failed, duration_sum, duration_count)
		VALUES (NEW.team_id, NEW.slot / 24, NEW.template_id, 1, NEW.status = 'failed', NEW.duration_sum, NEW.duration_count)
		ON CONFLICT DO UPDATE SET count = count + 1, failed = failed + excluded.failed,
			duration_sum = duration_sum + excluded.duration_sum, duration_count = duration_count + excluded.duration_count;
	-- The key's completed documents (0029), which FinishJob and RecordJob
	-- counted with a statement of their own.
	UPDATE api_keys SET documents = documents + 1
		WHERE NEW.status = 'completed' AND NEW.api_key_id != '' AND id = NEW.api_key_id;
END;
