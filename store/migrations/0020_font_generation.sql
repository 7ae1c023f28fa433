-- Team fonts (issue 21): a team's font assets are font families its
-- templates choose with fontFamily, and the in-memory metadata cache
-- (app/metacache.go) keeps each team's list of them. Writing or deleting a
-- font asset raises the metadata generation, as writes to templates do,
-- so a replaced, renamed or deleted font takes effect on the next request
-- in every process. Images and PDFs are read when drawn and are not kept.

CREATE TRIGGER meta_gen_font_assets_insert AFTER INSERT ON assets WHEN NEW.kind = 'font'
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_font_assets_delete AFTER DELETE ON assets WHEN OLD.kind = 'font'
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_font_assets_update AFTER UPDATE ON assets WHEN OLD.kind = 'font' OR NEW.kind = 'font'
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;
