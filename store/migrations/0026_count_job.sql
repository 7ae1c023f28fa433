-- One statement counts an ended job in the five roll-ups (issue 24,
-- docs/decisions.md "CPU per document"): countJob inserted into each
-- table itself, five statements through database/sql per job, which made
-- a third of the allocations of a synchronous generate's one write. An
-- insert into this empty view runs the five upserts in SQLite.
--
-- Merging note: a migration that rebuilds or renames job_stats,
-- job_stats_daily, job_team_hours, job_team_days or job_hours must create
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
END;
