-- Folio schema v1. Timestamps are Unix milliseconds (UTC); JSON columns hold text.

CREATE TABLE users (
	id                  TEXT PRIMARY KEY,
	email               TEXT NOT NULL,
	name                TEXT NOT NULL,
	password_hash       TEXT NOT NULL,
	profile_picture_url TEXT NOT NULL DEFAULT '',
	email_verified      INTEGER NOT NULL DEFAULT 0,
	two_factor_enabled  INTEGER NOT NULL DEFAULT 0,
	timezone            TEXT NOT NULL DEFAULT '',
	personal_team_id    TEXT NOT NULL,
	created_at          INTEGER NOT NULL,
	updated_at          INTEGER NOT NULL,
	deleted_at          INTEGER
);
CREATE UNIQUE INDEX users_email ON users(email);

CREATE TABLE teams (
	id          TEXT PRIMARY KEY,
	name        TEXT NOT NULL,
	slug        TEXT NOT NULL,
	is_personal INTEGER NOT NULL DEFAULT 0,
	owner_id    TEXT NOT NULL,
	plan        TEXT NOT NULL DEFAULT 'free',
	credits     INTEGER NOT NULL DEFAULT 0,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL,
	deleted_at  INTEGER
);
CREATE UNIQUE INDEX teams_slug ON teams(slug);

CREATE TABLE members (
	team_id   TEXT NOT NULL REFERENCES teams(id),
	user_id   TEXT NOT NULL REFERENCES users(id),
	role      TEXT NOT NULL,
	joined_at INTEGER NOT NULL,
	PRIMARY KEY (team_id, user_id)
);
CREATE INDEX members_user ON members(user_id);

CREATE TABLE refresh_tokens (
	id         TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id),
	hash       TEXT NOT NULL UNIQUE,
	family     TEXT NOT NULL,
	expires_at INTEGER NOT NULL,
	used_at    INTEGER,
	revoked_at INTEGER,
	created_at INTEGER NOT NULL
);
CREATE INDEX refresh_tokens_family ON refresh_tokens(family);

CREATE TABLE email_tokens (
	hash       TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id),
	purpose    TEXT NOT NULL,
	email      TEXT NOT NULL,
	expires_at INTEGER NOT NULL,
	used_at    INTEGER,
	created_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
	id             TEXT PRIMARY KEY,
	team_id        TEXT NOT NULL REFERENCES teams(id),
	name           TEXT NOT NULL,
	key_type       TEXT NOT NULL,
	key_prefix     TEXT NOT NULL,
	hash           TEXT NOT NULL UNIQUE,
	permissions    TEXT NOT NULL,
	is_active      INTEGER NOT NULL,
	created_by     TEXT NOT NULL,
	last_used_at   INTEGER,
	total_requests INTEGER NOT NULL DEFAULT 0,
	requests_today INTEGER NOT NULL DEFAULT 0,
	requests_day   TEXT NOT NULL DEFAULT '',
	created_at     INTEGER NOT NULL,
	updated_at     INTEGER NOT NULL
);
CREATE INDEX api_keys_team ON api_keys(team_id, created_at);

CREATE TABLE templates (
	id                   TEXT PRIMARY KEY,
	team_id              TEXT NOT NULL REFERENCES teams(id),
	short_id             TEXT NOT NULL UNIQUE,
	slug                 TEXT NOT NULL,
	name                 TEXT NOT NULL,
	description          TEXT NOT NULL DEFAULT '',
	template_type        TEXT NOT NULL,
	output_formats       TEXT NOT NULL,
	schema               TEXT NOT NULL,
	variables            TEXT NOT NULL,
	constants            TEXT NOT NULL,
	calculated_variables TEXT NOT NULL,
	folder_id            TEXT,
	is_published         INTEGER NOT NULL DEFAULT 0,
	published_at         INTEGER,
	created_by           TEXT NOT NULL,
	created_at           INTEGER NOT NULL,
	updated_at           INTEGER NOT NULL,
	deleted_at           INTEGER
);
CREATE UNIQUE INDEX templates_team_slug ON templates(team_id, slug) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX templates_team_name ON templates(team_id, name) WHERE deleted_at IS NULL;
CREATE INDEX templates_team_created ON templates(team_id, created_at);

CREATE TABLE jobs (
	id           TEXT PRIMARY KEY,
	team_id      TEXT NOT NULL REFERENCES teams(id),
	template_id  TEXT NOT NULL,
	batch_id     TEXT NOT NULL DEFAULT '',
	status       TEXT NOT NULL,
	format       TEXT NOT NULL,
	filename     TEXT NOT NULL DEFAULT '',
	metadata     TEXT,
	variables    TEXT,
	priority     INTEGER NOT NULL,
	error        TEXT NOT NULL DEFAULT '',
	error_code   TEXT NOT NULL DEFAULT '',
	error_info   TEXT,
	file_path    TEXT NOT NULL DEFAULT '',
	file_size    INTEGER NOT NULL DEFAULT 0,
	api_key_id   TEXT NOT NULL DEFAULT '',
	created_by   TEXT NOT NULL DEFAULT '',
	attempts     INTEGER NOT NULL DEFAULT 0,
	created_at   INTEGER NOT NULL,
	started_at   INTEGER,
	completed_at INTEGER,
	expires_at   INTEGER
);
CREATE INDEX jobs_team_created ON jobs(team_id, created_at);
CREATE INDEX jobs_team_status ON jobs(team_id, status, created_at);
CREATE INDEX jobs_team_template ON jobs(team_id, template_id, created_at);
CREATE INDEX jobs_unfinished ON jobs(status) WHERE status IN ('pending', 'processing');
CREATE INDEX jobs_key ON jobs(api_key_id) WHERE api_key_id != '';
