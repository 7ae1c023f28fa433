-- Team fonts: a team's font assets are font families its templates choose
-- with fontFamily, and every replica's metadata cache (app/metacache.go)
-- keeps each team's list of them. Writing or deleting a font asset raises
-- the metadata generation, as SQLite's 0020 does, so a new, replaced,
-- renamed or deleted font takes effect on the next request on every
-- replica. The asset writes take the generation's lock first (DB.metaTx).

CREATE FUNCTION meta_generation_bump_font() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF (TG_OP <> 'INSERT' AND OLD.kind = 'font') OR (TG_OP <> 'DELETE' AND NEW.kind = 'font') THEN
		UPDATE meta_generation SET n = n + 1 WHERE id = 1;
	END IF;
	RETURN NULL;
END
$$;

CREATE TRIGGER meta_gen_font_assets AFTER INSERT OR UPDATE OR DELETE ON assets
	FOR EACH ROW EXECUTE FUNCTION meta_generation_bump_font();
