-- Step 5: two-factor authentication (the TOTP secret, pending until
-- verified, and the last time step accepted, so no code is accepted
-- twice), hashed backup codes, and each team's activity feed.

CREATE TABLE two_factor (
	user_id    TEXT PRIMARY KEY REFERENCES users(id),
	secret     TEXT NOT NULL,
	enabled    BOOLEAN NOT NULL DEFAULT false,
	last_step  BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);

CREATE TABLE backup_codes (
	user_id    TEXT NOT NULL REFERENCES users(id),
	hash       TEXT NOT NULL,
	used_at    BIGINT,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (user_id, hash)
);

CREATE TABLE activity (
	seq           BIGINT GENERATED ALWAYS AS IDENTITY,
	id            TEXT PRIMARY KEY,
	team_id       TEXT NOT NULL,
	type          TEXT NOT NULL,
	user_id       TEXT NOT NULL,
	target_id     TEXT NOT NULL DEFAULT '',
	target_email  TEXT NOT NULL DEFAULT '',
	template_id   TEXT NOT NULL DEFAULT '',
	template_name TEXT NOT NULL DEFAULT '',
	details       TEXT,
	created_at    BIGINT NOT NULL
);
CREATE INDEX activity_team_created ON activity(team_id, created_at, seq);
