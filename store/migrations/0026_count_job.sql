-- One statement counts an ended job in the seven roll-ups (issue 24,
-- docs/decisions.md "CPU per document"): countJob inserted into each
-- table itself, five statements through database/sql per job, which made
-- a third of the allocations of a synchronous generate's one write. An
-- insert into this empty view runs the upserts in SQLite.
--
-- Merging note: a migration that rebuilds or renames job_stats,
-- job_stats_daily, job_team_hours, job_team_days, job_hours,
-- job_template_hours or job_template_days must create
-- this trigger again.
CREATE VIEW job_count (team_id, slot, template_id, status, format, duration_sum, duration_count) AS
	SELECT '', 0, '', '', '', 0, 0 WHERE 0;

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
END;
