-- Step 7: templates, their published versions, shares with other teams,
-- folders and categories, and the asset references of each template's
-- working copy (version 0) and versions. JSON columns stay TEXT, so the
-- bytes app wrote are the bytes it reads (and hashes).

CREATE TABLE templates (
	seq                  BIGINT GENERATED ALWAYS AS IDENTITY,
	id                   TEXT PRIMARY KEY,
	team_id              TEXT NOT NULL REFERENCES teams(id),
	short_id             TEXT NOT NULL UNIQUE,
	slug                 TEXT NOT NULL,
	name                 TEXT COLLATE "C" NOT NULL,
	description          TEXT NOT NULL DEFAULT '',
	template_type        TEXT NOT NULL,
	output_formats       TEXT NOT NULL,
	schema               TEXT NOT NULL,
	variables            TEXT NOT NULL,
	constants            TEXT NOT NULL,
	calculated_variables TEXT NOT NULL,
	sample_data          TEXT NOT NULL DEFAULT '{}',
	folder_id            TEXT,
	is_published         BOOLEAN NOT NULL DEFAULT false,
	published_at         BIGINT,
	-- published_version is the newest published version (0: never);
	-- published_hash its content hash, so "has a draft" is a comparison.
	published_version    INTEGER NOT NULL DEFAULT 0,
	published_hash       TEXT NOT NULL DEFAULT '',
	created_by           TEXT NOT NULL,
	deleted_by           TEXT NOT NULL DEFAULT '',
	created_at           BIGINT NOT NULL,
	updated_at           BIGINT NOT NULL,
	deleted_at           BIGINT
);
CREATE UNIQUE INDEX templates_team_slug ON templates(team_id, slug) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX templates_team_name ON templates(team_id, name) WHERE deleted_at IS NULL;
CREATE INDEX templates_team_created ON templates(team_id, created_at, seq);
CREATE INDEX templates_team_folder ON templates(team_id, folder_id) WHERE deleted_at IS NULL;

CREATE TABLE template_versions (
	id                   TEXT PRIMARY KEY,
	template_id          TEXT NOT NULL REFERENCES templates(id),
	team_id              TEXT NOT NULL,
	version              INTEGER NOT NULL,
	release_notes        TEXT NOT NULL DEFAULT '',
	restored_from        INTEGER,
	name                 TEXT NOT NULL,
	description          TEXT NOT NULL DEFAULT '',
	template_type        TEXT NOT NULL,
	output_formats       TEXT NOT NULL,
	schema               TEXT NOT NULL,
	variables            TEXT NOT NULL,
	constants            TEXT NOT NULL,
	calculated_variables TEXT NOT NULL,
	sample_data          TEXT NOT NULL DEFAULT '{}',
	content_hash         TEXT NOT NULL,
	published_by         TEXT NOT NULL,
	published_at         BIGINT NOT NULL,
	UNIQUE (template_id, version)
);

CREATE TABLE template_shares (
	seq            BIGINT GENERATED ALWAYS AS IDENTITY,
	id             TEXT PRIMARY KEY,
	template_id    TEXT NOT NULL REFERENCES templates(id),
	owner_team_id  TEXT NOT NULL,
	target_team_id TEXT NOT NULL REFERENCES teams(id),
	permission     TEXT NOT NULL, -- view or edit
	created_by     TEXT NOT NULL,
	created_at     BIGINT NOT NULL,
	updated_at     BIGINT NOT NULL,
	UNIQUE (template_id, target_team_id)
);
CREATE INDEX template_shares_target ON template_shares(target_team_id, created_at);

CREATE TABLE template_groups (
	seq        BIGINT GENERATED ALWAYS AS IDENTITY,
	id         TEXT PRIMARY KEY,
	team_id    TEXT NOT NULL REFERENCES teams(id),
	kind       TEXT NOT NULL, -- folder or category
	name       TEXT COLLATE "C" NOT NULL,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX template_groups_team_name ON template_groups(team_id, kind, name);

CREATE TABLE template_categories (
	seq         BIGINT GENERATED ALWAYS AS IDENTITY,
	template_id TEXT NOT NULL REFERENCES templates(id),
	category_id TEXT NOT NULL REFERENCES template_groups(id),
	PRIMARY KEY (template_id, category_id)
);
CREATE INDEX template_categories_category ON template_categories(category_id);

CREATE TABLE template_asset_refs (
	template_id TEXT NOT NULL REFERENCES templates(id),
	version     INTEGER NOT NULL, -- 0: the working copy
	team_id     TEXT NOT NULL,
	ref         TEXT NOT NULL,
	PRIMARY KEY (template_id, version, ref)
);
CREATE INDEX template_asset_refs_team ON template_asset_refs(team_id, ref);

-- The metadata cache holds templates, versions and shares (0006).
CREATE TRIGGER meta_gen_templates AFTER INSERT OR UPDATE OR DELETE ON templates
	FOR EACH ROW EXECUTE FUNCTION meta_generation_bump();
CREATE TRIGGER meta_gen_template_versions AFTER INSERT OR UPDATE OR DELETE ON template_versions
	FOR EACH ROW EXECUTE FUNCTION meta_generation_bump();
CREATE TRIGGER meta_gen_template_shares AFTER INSERT OR UPDATE OR DELETE ON template_shares
	FOR EACH ROW EXECUTE FUNCTION meta_generation_bump();
