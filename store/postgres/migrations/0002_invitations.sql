-- Step 2: invitations to teams.

CREATE TABLE invitations (
	seq        BIGINT GENERATED ALWAYS AS IDENTITY,
	id         TEXT PRIMARY KEY,
	team_id    TEXT NOT NULL REFERENCES teams(id),
	email      TEXT NOT NULL,
	role       TEXT NOT NULL,
	status     TEXT NOT NULL, -- pending, accepted, rejected, cancelled, expired
	invited_by TEXT NOT NULL,
	expires_at BIGINT NOT NULL,
	created_at BIGINT NOT NULL,
	updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX invitations_pending ON invitations(team_id, email) WHERE status = 'pending';
CREATE INDEX invitations_email ON invitations(email, status);
