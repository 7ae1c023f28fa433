-- The metadata generation (issue 24): one counter raised by every
-- transaction that changes what the in-memory metadata cache (app/metacache.go)
-- holds: API keys, users, teams, memberships, templates, their versions and
-- shares. A reader compares it with the generation its cache was filled at,
-- so a write made by any connection or process (folio admin set-plan beside
-- the server; later another replica) is seen by the next request. Triggers
-- rather than Go code, so no write path can forget it. Columns that hot
-- paths change on every request or document (a key's usage counters, a
-- team's credits) are left out: nothing cached reads them. A new team needs
-- no trigger: lookups that find nothing are not cached.

CREATE TABLE meta_generation (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  INTEGER NOT NULL
);
INSERT INTO meta_generation (id, n) VALUES (1, 1);

CREATE TRIGGER meta_gen_api_keys_insert AFTER INSERT ON api_keys
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_api_keys_delete AFTER DELETE ON api_keys
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_api_keys_update AFTER UPDATE OF team_id, hash, permissions, is_active, created_by ON api_keys
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_users_insert AFTER INSERT ON users
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_users_delete AFTER DELETE ON users
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_users_update AFTER UPDATE ON users
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_teams_delete AFTER DELETE ON teams
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_teams_update AFTER UPDATE OF name, slug, is_personal, owner_id, plan, deleted_at ON teams
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_members_insert AFTER INSERT ON members
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_members_delete AFTER DELETE ON members
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_members_update AFTER UPDATE ON members
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_templates_insert AFTER INSERT ON templates
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_templates_delete AFTER DELETE ON templates
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_templates_update AFTER UPDATE ON templates
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_template_versions_insert AFTER INSERT ON template_versions
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_template_versions_delete AFTER DELETE ON template_versions
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_template_versions_update AFTER UPDATE ON template_versions
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_template_shares_insert AFTER INSERT ON template_shares
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_template_shares_delete AFTER DELETE ON template_shares
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;

CREATE TRIGGER meta_gen_template_shares_update AFTER UPDATE ON template_shares
BEGIN UPDATE meta_generation SET n = n + 1 WHERE id = 1; END;
