-- An ended job's counters are written once per write group (issue 24,
-- docs/decisions.md "Issue 24: CPU beyond render, third pass"): countJob
-- inserted into job_count once per job; now the writer adds up the jobs
-- of the calls a grouped transaction kept (store/analytics.go, jobCounts)
-- and inserts one row per distinct (team, hour, template, status, format,
-- API key) before the commit, with how many jobs it stands for. The view
-- gains that count; the seven upserts and the key's update add it instead
-- of 1. The tables are 0026's and 0029's, unchanged.
--
-- Merging note: a migration that rebuilds or renames one of the roll-up
-- tables of 0026 must create this trigger again (this file's version).
DROP TRIGGER job_count_insert;
DROP VIEW job_count;

CREATE VIEW job_count (team_id, slot, template_id, status, format, count, duration_sum, duration_count, api_key_id) AS
	SELECT '', 0, '', '', '', 0, 0, 0, '' WHERE 0;

CREATE TRIGGER job_count_insert INSTEAD OF INSERT ON job_count BEGIN
	INSERT INTO job_stats (team_id, slot, template_id, status, format, count, duration_sum, duration_count)
		VALUES (NEW.team_id, NEW.slot, NEW.template_id, NEW.status, NEW.format, NEW.count, NEW.duration_sum, NEW.duration_count)
		ON CONFLICT DO UPDATE SET count = count + excluded.count,
			duration_sum = duration_sum + excluded.duration_sum, duration_count = duration_count + excluded.duration_count;
	INSERT INTO job_stats_daily (team_id, day, template_id, status, format, count, duration_sum, duration_count)
		VALUES (NEW.team_id, NEW.slot / 24, NEW.template_id, NEW.status, NEW.format, NEW.count, NEW.duration_sum, NEW.duration_count)
		ON CONFLICT DO UPDATE SET count = count + excluded.count,
			duration_sum = duration_sum + excluded.duration_sum, duration_count = duration_count + excluded.duration_count;
	INSERT INTO job_team_hours (team_id, slot, status, format, count, duration_sum, duration_count)
		VALUES (NEW.team_id, NEW.slot, NEW.status, NEW.format, NEW.count, NEW.duration_sum, NEW.duration_count)
		ON CONFLICT DO UPDATE SET count = count + excluded.count,
			duration_sum = duration_sum + excluded.duration_sum, duration_count = duration_count + excluded.duration_count;
	INSERT INTO job_team_days (team_id, day, status, format, count, duration_sum, duration_count)
		VALUES (NEW.team_id, NEW.slot / 24, NEW.status, NEW.format, NEW.count, NEW.duration_sum, NEW.duration_count)
		ON CONFLICT DO UPDATE SET count = count + excluded.count,
			duration_sum = duration_sum + excluded.duration_sum, duration_count = duration_count + excluded.duration_count;
	INSERT INTO job_hours (team_id, slot, count) VALUES (NEW.team_id, NEW.slot, NEW.count)
		ON CONFLICT DO UPDATE SET count = count + excluded.count;
	-- By template alone (0022, dashboard insights), failed counted apart.
	INSERT INTO job_template_hours (team_id, slot, template_id, count, failed, duration_sum, duration_count)
		VALUES (NEW.team_id, NEW.slot, NEW.template_id, NEW.count, (NEW.status = 'failed') * NEW.count, NEW.duration_sum, NEW.duration_count)
		ON CONFLICT DO UPDATE SET count = count + excluded.count, failed = failed + excluded.failed,
			duration_sum = duration_sum + excluded.duration_sum, duration_count = duration_count + excluded.duration_count;
	INSERT INTO job_template_days (team_id, day, template_id, count, failed, duration_sum, duration_count)
		VALUES (NEW.team_id, NEW.slot / 24, NEW.template_id, NEW.count, (NEW.status = 'failed') * NEW.count, NEW.duration_sum, NEW.duration_count)
		ON CONFLICT DO UPDATE SET count = count + excluded.count, failed = failed + excluded.failed,
			duration_sum = duration_sum + excluded.duration_sum, duration_count = duration_count + excluded.duration_count;
	-- The key's completed documents (0029).
	UPDATE api_keys SET documents = documents + NEW.count
		WHERE NEW.status = 'completed' AND NEW.api_key_id != '' AND id = NEW.api_key_id;
END;
