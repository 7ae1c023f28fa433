-- Folio on PostgreSQL, step 1: accounts, teams, memberships, dashboard
-- sessions and the API's refresh and mail tokens.
--
-- Dialect (docs/decisions.md, PostgreSQL): timestamps are BIGINT Unix
-- milliseconds (UTC) as in the SQLite schema, so both backends return the
-- same instants; flags are BOOLEAN; text that lists sort by is COLLATE "C"
-- (bytewise, as SQLite's BINARY); seq, an identity column, stands in for
-- SQLite's rowid where lists break ties by insertion order.

CREATE TABLE users (
	seq                  BIGINT GENERATED ALWAYS AS IDENTITY,
	id                   TEXT PRIMARY KEY,
	email                TEXT NOT NULL,
	name                 TEXT NOT NULL,
	password_hash        TEXT NOT NULL,
	profile_picture_url  TEXT NOT NULL DEFAULT '',
	email_verified       BOOLEAN NOT NULL DEFAULT false,
	two_factor_enabled   BOOLEAN NOT NULL DEFAULT false,
	timezone             TEXT NOT NULL DEFAULT '',
	personal_team_id     TEXT NOT NULL,
	created_at           BIGINT NOT NULL,
	updated_at           BIGINT NOT NULL,
	-- deleted_at marks an account pending deletion; purged_at one whose
	-- data the janitor erased after the grace period.
	deleted_at           BIGINT,
	purged_at            BIGINT,
	deletion_reason      TEXT NOT NULL DEFAULT '',
	deletion_reason_text TEXT NOT NULL DEFAULT '',
	pending_email        TEXT NOT NULL DEFAULT '',
	sessions_valid_from  BIGINT NOT NULL DEFAULT 0,
	marketing_emails     BOOLEAN NOT NULL DEFAULT false,
	product_updates      BOOLEAN NOT NULL DEFAULT true,
	weekly_digest        BOOLEAN NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX users_email ON users(email);
CREATE INDEX users_pending_deletion ON users(deleted_at) WHERE deleted_at IS NOT NULL AND purged_at IS NULL;

CREATE TABLE teams (
	seq         BIGINT GENERATED ALWAYS AS IDENTITY,
	id          TEXT PRIMARY KEY,
	name        TEXT COLLATE "C" NOT NULL,
	slug        TEXT NOT NULL,
	is_personal BOOLEAN NOT NULL DEFAULT false,
	owner_id    TEXT NOT NULL,
	plan        TEXT NOT NULL DEFAULT 'free',
	credits     BIGINT NOT NULL DEFAULT 0,
	created_at  BIGINT NOT NULL,
	updated_at  BIGINT NOT NULL,
	deleted_at  BIGINT
);
CREATE UNIQUE INDEX teams_slug ON teams(slug);

CREATE TABLE members (
	seq       BIGINT GENERATED ALWAYS AS IDENTITY,
	team_id   TEXT NOT NULL REFERENCES teams(id),
	user_id   TEXT NOT NULL REFERENCES users(id),
	role      TEXT NOT NULL,
	joined_at BIGINT NOT NULL,
	PRIMARY KEY (team_id, user_id)
);
CREATE INDEX members_user ON members(user_id);

CREATE TABLE sessions (
	id           TEXT PRIMARY KEY,
	hash         TEXT NOT NULL UNIQUE,
	user_id      TEXT NOT NULL REFERENCES users(id),
	team_id      TEXT NOT NULL,
	pending_2fa  BOOLEAN NOT NULL DEFAULT false, -- password checked, two-factor code still needed
	user_agent   TEXT NOT NULL DEFAULT '',
	ip           TEXT NOT NULL DEFAULT '',
	created_at   BIGINT NOT NULL,
	last_seen_at BIGINT NOT NULL,
	expires_at   BIGINT NOT NULL -- absolute end; idle sessions end earlier (app.SessionIdle)
);
CREATE INDEX sessions_user ON sessions(user_id);
CREATE INDEX sessions_expires ON sessions(expires_at);
CREATE INDEX sessions_seen ON sessions(last_seen_at);

CREATE TABLE refresh_tokens (
	id         TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id),
	hash       TEXT NOT NULL UNIQUE,
	family     TEXT NOT NULL,
	expires_at BIGINT NOT NULL,
	used_at    BIGINT,
	revoked_at BIGINT,
	created_at BIGINT NOT NULL
);
CREATE INDEX refresh_tokens_family ON refresh_tokens(family);
CREATE INDEX refresh_tokens_user ON refresh_tokens(user_id);

CREATE TABLE email_tokens (
	hash       TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id),
	purpose    TEXT NOT NULL,
	email      TEXT NOT NULL,
	expires_at BIGINT NOT NULL,
	used_at    BIGINT,
	created_at BIGINT NOT NULL
);
CREATE INDEX email_tokens_user ON email_tokens(user_id);
