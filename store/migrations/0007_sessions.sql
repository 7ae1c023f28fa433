-- Dashboard sessions: the browser holds a random token in an HttpOnly cookie,
-- the database its SHA-256 and the team the session acts on. Separate from
-- the API's JWTs and refresh tokens (docs/decisions.md, Dashboard).

CREATE TABLE sessions (
	id           TEXT PRIMARY KEY,
	hash         TEXT NOT NULL UNIQUE,
	user_id      TEXT NOT NULL REFERENCES users(id),
	team_id      TEXT NOT NULL,
	pending_2fa  INTEGER NOT NULL DEFAULT 0, -- 1: password checked, two-factor code still needed
	user_agent   TEXT NOT NULL DEFAULT '',
	ip           TEXT NOT NULL DEFAULT '',
	created_at   INTEGER NOT NULL,
	last_seen_at INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL -- absolute end; idle sessions end earlier (app.SessionIdle)
);
CREATE INDEX sessions_user ON sessions(user_id);
CREATE INDEX sessions_expires ON sessions(expires_at);
