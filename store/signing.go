package store

import (
	"context"
	"database/sql"
	"errors"

	"folio/app"
)

var _ app.SigningCertificateStore = (*DB)(nil)

const signingCols = `id, team_id, name, subject, common_name, issuer, serial, not_before, not_after, fingerprint, key_type, chain_size, sealed, created_by, created_at`

func scanSigning(row scanner) (*app.SigningCertificate, error) {
	var c app.SigningCertificate
	var nb, na, created int64
	err := row.Scan(&c.ID, &c.TeamID, &c.Name, &c.Subject, &c.CommonName, &c.Issuer, &c.Serial, &nb, &na, &c.Fingerprint, &c.KeyType,
		&c.ChainSize, &c.Sealed, &c.CreatedBy, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeSigningNotFound, "signing certificate")
	} else if err != nil {
		return nil, err
	}
	c.NotBefore, c.NotAfter, c.CreatedAt = fromMS(nb), fromMS(na), fromMS(created)
	return &c, nil
}

// CreateSigningCertificate inserts a team's certificate; its name is unique in the team.
func (db *DB) CreateSigningCertificate(ctx context.Context, c *app.SigningCertificate) error {
	return db.tx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO signing_certificates (`+signingCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, c.TeamID, c.Name, c.Subject, c.CommonName, c.Issuer, c.Serial, ms(c.NotBefore), ms(c.NotAfter), c.Fingerprint, c.KeyType,
			c.ChainSize, c.Sealed, c.CreatedBy, ms(c.CreatedAt))
		if isUnique(err, "name") {
			return (&app.Error{Code: app.ECodeSigningExists, Message: "a signing certificate named " + c.Name + " already exists; choose another name or delete that one"}).
				WithInfo("field", "name")
		}
		return err
	})
}

// FindSigningCertificates lists a team's certificates by name.
func (db *DB) FindSigningCertificates(ctx context.Context, teamID string) ([]*app.SigningCertificate, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+signingCols+` FROM signing_certificates WHERE team_id = ? ORDER BY name, id`, teamID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*app.SigningCertificate
	for rows.Next() {
		c, err := scanSigning(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// FindSigningCertificate finds a team's certificate by id, else by name.
func (db *DB) FindSigningCertificate(ctx context.Context, teamID, ref string) (*app.SigningCertificate, error) {
	c, err := scanSigning(db.read.QueryRowContext(ctx, `SELECT `+signingCols+` FROM signing_certificates WHERE id = ? AND team_id = ?`, ref, teamID))
	if app.ErrorCode(err) != app.ECodeSigningNotFound {
		return c, err
	}
	return scanSigning(db.read.QueryRowContext(ctx, `SELECT `+signingCols+` FROM signing_certificates WHERE team_id = ? AND name = ?`, teamID, ref))
}

// DeleteSigningCertificate deletes a team's certificate.
func (db *DB) DeleteSigningCertificate(ctx context.Context, teamID, id string) error {
	return db.tx(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM signing_certificates WHERE team_id = ? AND id = ?`, teamID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return app.ErrNotFound(app.ECodeSigningNotFound, "signing certificate")
		}
		return nil
	})
}
