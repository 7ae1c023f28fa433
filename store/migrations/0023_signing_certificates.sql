-- Signing certificates (issue 23, DESIGN.md section 10 "sign"): a team's
-- PKCS #12 upload, kept as what the API shows (subject, issuer, serial,
-- validity, SHA-256 fingerprint of the leaf) plus the private key and
-- chain sealed with AES-256-GCM under <data>/keys/signing.key (sealed:
-- nonce || ciphertext; the row's id and team are the additional data, so
-- a sealed blob copied to another row does not open). The p12 file and
-- its password are not kept.
CREATE TABLE signing_certificates (
	id          TEXT PRIMARY KEY,
	team_id     TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
	name        TEXT NOT NULL,
	subject     TEXT NOT NULL,
	common_name TEXT NOT NULL,
	issuer      TEXT NOT NULL,
	serial      TEXT NOT NULL,
	not_before  INTEGER NOT NULL,
	not_after   INTEGER NOT NULL,
	fingerprint TEXT NOT NULL,
	key_type    TEXT NOT NULL,
	chain_size  INTEGER NOT NULL,
	sealed      BLOB NOT NULL,
	created_by  TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	UNIQUE (team_id, name)
);
