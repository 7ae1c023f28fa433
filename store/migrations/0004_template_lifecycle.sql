-- Template lifecycle: published versions, shares with other teams, folders
-- and categories, soft-delete bookkeeping, and the template version a job used.

-- published_version is the newest published version number (0: never
-- published); published_hash is the content hash of that version, so "has
-- unpublished changes" is a comparison with the working copy's hash.
ALTER TABLE templates ADD COLUMN published_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE templates ADD COLUMN published_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE templates ADD COLUMN deleted_by TEXT NOT NULL DEFAULT '';
CREATE INDEX templates_team_folder ON templates(team_id, folder_id) WHERE deleted_at IS NULL;

-- A published version is an immutable copy of the template's content.
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
	content_hash         TEXT NOT NULL,
	published_by         TEXT NOT NULL,
	published_at         INTEGER NOT NULL,
	UNIQUE (template_id, version)
);

CREATE TABLE template_shares (
	id             TEXT PRIMARY KEY,
	template_id    TEXT NOT NULL REFERENCES templates(id),
	owner_team_id  TEXT NOT NULL,
	target_team_id TEXT NOT NULL REFERENCES teams(id),
	permission     TEXT NOT NULL, -- view or edit
	created_by     TEXT NOT NULL,
	created_at     INTEGER NOT NULL,
	updated_at     INTEGER NOT NULL,
	UNIQUE (template_id, target_team_id)
);
CREATE INDEX template_shares_target ON template_shares(target_team_id, created_at);

-- Folders and categories: minimal named records owned by a team. A template
-- sits in at most one folder (templates.folder_id) and any number of categories.
CREATE TABLE template_groups (
	id         TEXT PRIMARY KEY,
	team_id    TEXT NOT NULL REFERENCES teams(id),
	kind       TEXT NOT NULL, -- folder or category
	name       TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX template_groups_team_name ON template_groups(team_id, kind, name);

CREATE TABLE template_categories (
	template_id TEXT NOT NULL REFERENCES templates(id),
	category_id TEXT NOT NULL REFERENCES template_groups(id),
	PRIMARY KEY (template_id, category_id)
);
CREATE INDEX template_categories_category ON template_categories(category_id);

-- The published version a job rendered; NULL: the working draft.
ALTER TABLE jobs ADD COLUMN template_version INTEGER;
