-- Step 6: the metadata generation (app.MetaCache): one counter raised, in
-- the same transaction, by every write to what the in-memory metadata cache
-- holds, so every replica's cache sees a change by any other at its next
-- request. Row triggers, as in SQLite's 0016, so no write path can forget
-- it; the columns that change on every request (a key's usage counts, a
-- team's credits) are left out. Later steps that add templates, versions
-- and shares add their triggers with them.
--
-- The counter's row is one lock for the whole cluster: transactions that
-- raise it take it first (DB.metaTx), before any row of their own, so two
-- of them never wait for each other in opposite orders (deadlock).

CREATE TABLE meta_generation (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  BIGINT NOT NULL
);
INSERT INTO meta_generation (id, n) VALUES (1, 1);

CREATE FUNCTION meta_generation_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE meta_generation SET n = n + 1 WHERE id = 1;
	RETURN NULL;
END
$$;

CREATE TRIGGER meta_gen_api_keys AFTER INSERT OR DELETE ON api_keys
	FOR EACH ROW EXECUTE FUNCTION meta_generation_bump();
CREATE TRIGGER meta_gen_api_keys_update AFTER UPDATE OF team_id, hash, permissions, is_active, created_by ON api_keys
	FOR EACH ROW EXECUTE FUNCTION meta_generation_bump();
CREATE TRIGGER meta_gen_users AFTER INSERT OR UPDATE OR DELETE ON users
	FOR EACH ROW EXECUTE FUNCTION meta_generation_bump();
CREATE TRIGGER meta_gen_teams AFTER DELETE ON teams
	FOR EACH ROW EXECUTE FUNCTION meta_generation_bump();
CREATE TRIGGER meta_gen_teams_update AFTER UPDATE OF name, slug, is_personal, owner_id, plan, deleted_at ON teams
	FOR EACH ROW EXECUTE FUNCTION meta_generation_bump();
CREATE TRIGGER meta_gen_members AFTER INSERT OR UPDATE OR DELETE ON members
	FOR EACH ROW EXECUTE FUNCTION meta_generation_bump();
