-- Teams and accounts: invitations, activity, profile, email preferences,
-- two-factor authentication and account deletion.

-- users.deleted_at (from 0001) marks an account pending deletion; purged_at
-- marks one whose data the janitor erased after the grace period.
ALTER TABLE users ADD COLUMN purged_at INTEGER;
ALTER TABLE users ADD COLUMN deletion_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN deletion_reason_text TEXT NOT NULL DEFAULT '';
-- An address the user asked to change to; it replaces email once verified.
ALTER TABLE users ADD COLUMN pending_email TEXT NOT NULL DEFAULT '';
-- Access tokens issued before this time are refused (password change).
ALTER TABLE users ADD COLUMN sessions_valid_from INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN marketing_emails INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN product_updates INTEGER NOT NULL DEFAULT 1;
ALTER TABLE users ADD COLUMN weekly_digest INTEGER NOT NULL DEFAULT 0;
CREATE INDEX users_pending_deletion ON users(deleted_at) WHERE deleted_at IS NOT NULL AND purged_at IS NULL;

CREATE TABLE invitations (
	id         TEXT PRIMARY KEY,
	team_id    TEXT NOT NULL REFERENCES teams(id),
	email      TEXT NOT NULL,
	role       TEXT NOT NULL,
	status     TEXT NOT NULL, -- pending, accepted, rejected, cancelled, expired
	invited_by TEXT NOT NULL,
	expires_at INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX invitations_pending ON invitations(team_id, email) WHERE status = 'pending';
CREATE INDEX invitations_email ON invitations(email, status);

CREATE TABLE activity (
	id            TEXT PRIMARY KEY,
	team_id       TEXT NOT NULL,
	type          TEXT NOT NULL,
	user_id       TEXT NOT NULL,
	target_id     TEXT NOT NULL DEFAULT '',
	target_email  TEXT NOT NULL DEFAULT '',
	template_id   TEXT NOT NULL DEFAULT '',
	template_name TEXT NOT NULL DEFAULT '',
	details       TEXT,
	created_at    INTEGER NOT NULL
);
CREATE INDEX activity_team_created ON activity(team_id, created_at);

-- Two-factor state: the TOTP secret (pending until verified), and the last
-- time step accepted, so a code is never accepted twice.
CREATE TABLE two_factor (
	user_id    TEXT PRIMARY KEY REFERENCES users(id),
	secret     TEXT NOT NULL,
	enabled    INTEGER NOT NULL DEFAULT 0,
	last_step  INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);

CREATE TABLE backup_codes (
	user_id    TEXT NOT NULL REFERENCES users(id),
	hash       TEXT NOT NULL,
	used_at    INTEGER,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (user_id, hash)
);
