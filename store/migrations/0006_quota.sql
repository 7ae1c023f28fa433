-- Monthly usage per team and how each job was paid for, so a failed job is
-- refunded exactly once to where it was charged.

CREATE TABLE usage (
	team_id      TEXT NOT NULL,
	month        TEXT NOT NULL, -- YYYY-MM, UTC
	documents    INTEGER NOT NULL DEFAULT 0, -- charged to the monthly quota
	credits_used INTEGER NOT NULL DEFAULT 0, -- charged to credits
	PRIMARY KEY (team_id, month)
);

ALTER TABLE jobs ADD COLUMN charged TEXT NOT NULL DEFAULT ''; -- '', 'quota' or 'credits'
ALTER TABLE jobs ADD COLUMN charge_month TEXT NOT NULL DEFAULT '';
