-- Assets (issue 22; DESIGN.md section 10): images, fonts and PDFs a team
-- keeps for its templates. The bytes are in the file store (file: the
-- name under <data>/files, a new one for every content); the record holds
-- what was read from them when they were checked. Names are unique per
-- team: a template refers to an asset as asset:<name> or asset:<id>.
CREATE TABLE assets (
	id           TEXT PRIMARY KEY,
	team_id      TEXT NOT NULL REFERENCES teams(id),
	name         TEXT NOT NULL,
	kind         TEXT NOT NULL,
	format       TEXT NOT NULL,
	content_type TEXT NOT NULL,
	size         INTEGER NOT NULL,
	sha256       TEXT NOT NULL,
	width        INTEGER NOT NULL DEFAULT 0,
	height       INTEGER NOT NULL DEFAULT 0,
	font         TEXT NOT NULL DEFAULT '',
	file         TEXT NOT NULL,
	created_by   TEXT NOT NULL,
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	UNIQUE (team_id, name)
);
CREATE INDEX assets_team_kind ON assets(team_id, kind, name);

-- The asset references ("asset:<ref>") of each template's working copy
-- (version 0) and published versions, written with them, so that deleting
-- an asset in use can be refused in one query. Templates saved before
-- assets existed cannot hold a reference that resolves, so nothing is
-- backfilled.
CREATE TABLE template_asset_refs (
	template_id TEXT NOT NULL REFERENCES templates(id),
	version     INTEGER NOT NULL,
	team_id     TEXT NOT NULL,
	ref         TEXT NOT NULL,
	PRIMARY KEY (template_id, version, ref)
);
CREATE INDEX template_asset_refs_team ON template_asset_refs(team_id, ref);
