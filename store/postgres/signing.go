package postgres

import (
	"context"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.SigningCertificateStore = (*DB)(nil)

// CreateSigningCertificate inserts a team's certificate; its name is unique
// in the team. The sealed key is kept byte for byte as the SigningService
// sealed it.
func (db *DB) CreateSigningCertificate(ctx context.Context, c *app.SigningCertificate) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO signing_certificates (`+scan.SigningCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`, scan.SigningArgs(c)...)
	if isUnique(err, "signing_certificates_team_name") {
		return app.ErrSigningExists(c.Name)
	}
	return err
}

// FindSigningCertificates lists a team's certificates by name.
func (db *DB) FindSigningCertificates(ctx context.Context, teamID string) ([]*app.SigningCertificate, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+scan.SigningCols+` FROM signing_certificates WHERE team_id = $1 ORDER BY name, id`, teamID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.SigningCertificate)
}

// FindSigningCertificate finds a team's certificate by id, else by name.
func (db *DB) FindSigningCertificate(ctx context.Context, teamID, ref string) (*app.SigningCertificate, error) {
	c, err := scan.SigningCertificate(db.pool.QueryRow(ctx, `SELECT `+scan.SigningCols+` FROM signing_certificates WHERE id = $1 AND team_id = $2`, ref, teamID))
	if app.ErrorCode(err) != app.ECodeSigningNotFound {
		return c, err
	}
	return scan.SigningCertificate(db.pool.QueryRow(ctx, `SELECT `+scan.SigningCols+` FROM signing_certificates WHERE team_id = $1 AND name = $2`, teamID, ref))
}

// DeleteSigningCertificate deletes a team's certificate.
func (db *DB) DeleteSigningCertificate(ctx context.Context, teamID, id string) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM signing_certificates WHERE team_id = $1 AND id = $2`, teamID, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return app.ErrNotFound(app.ECodeSigningNotFound, "signing certificate")
	}
	return nil
}
