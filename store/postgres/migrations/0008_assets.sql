-- Step 8: assets, the images, fonts and PDFs a team keeps for its
-- templates. The bytes are in the file store; the record holds what was
-- read from them. Names are unique per team and sort bytewise.

CREATE TABLE assets (
	id           TEXT PRIMARY KEY,
	team_id      TEXT NOT NULL REFERENCES teams(id),
	name         TEXT COLLATE "C" NOT NULL,
	kind         TEXT NOT NULL,
	format       TEXT NOT NULL,
	content_type TEXT NOT NULL,
	size         BIGINT NOT NULL,
	sha256       TEXT NOT NULL,
	width        INTEGER NOT NULL DEFAULT 0,
	height       INTEGER NOT NULL DEFAULT 0,
	font         TEXT NOT NULL DEFAULT '',
	file         TEXT NOT NULL,
	created_by   TEXT NOT NULL,
	created_at   BIGINT NOT NULL,
	updated_at   BIGINT NOT NULL,
	CONSTRAINT assets_team_name UNIQUE (team_id, name)
);
CREATE INDEX assets_team_kind ON assets(team_id, kind, name);
