-- A generate or batch request may override its template's locale (a BCP 47
-- tag such as de-DE); the worker renders the job in it. '' is the
-- template's own locale.

ALTER TABLE jobs ADD COLUMN locale TEXT NOT NULL DEFAULT '';
