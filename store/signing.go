package store

import (
	"context"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.SigningCertificateStore = (*DB)(nil)

// CreateSigningCertificate inserts a team's certificate; its name is unique in the team.
func (db *DB) CreateSigningCertificate(ctx context.Context, c *app.SigningCertificate) error {
	return db.tx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO signing_certificates (`+scan.SigningCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			scan.SigningArgs(c)...)
		if isUnique(err, "name") {
			return app.ErrSigningExists(c.Name)
		}
		return err
	})
}

// FindSigningCertificates lists a team's certificates by name.
func (db *DB) FindSigningCertificates(ctx context.Context, teamID string) ([]*app.SigningCertificate, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+scan.SigningCols+` FROM signing_certificates WHERE team_id = ? ORDER BY name, id`, teamID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.SigningCertificate)
}

// FindSigningCertificate finds a team's certificate by id, else by name.
func (db *DB) FindSigningCertificate(ctx context.Context, teamID, ref string) (*app.SigningCertificate, error) {
	c, err := scan.SigningCertificate(db.read.QueryRowContext(ctx, `SELECT `+scan.SigningCols+` FROM signing_certificates WHERE id = ? AND team_id = ?`, ref, teamID))
	if app.ErrorCode(err) != app.ECodeSigningNotFound {
		return c, err
	}
	return scan.SigningCertificate(db.read.QueryRowContext(ctx, `SELECT `+scan.SigningCols+` FROM signing_certificates WHERE team_id = ? AND name = ?`, teamID, ref))
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
