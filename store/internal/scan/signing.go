package scan

import (
	"database/sql"
	"errors"

	"folio/app"
)

// SigningCols are the columns SigningCertificate reads, from
// signing_certificates (also the insert's column list, in the order of
// SigningArgs). sealed is the private key and chain as the SigningService
// sealed them; the stores keep its bytes as they are.
const SigningCols = `id, team_id, name, subject, common_name, issuer, serial, not_before, not_after, fingerprint, key_type, chain_size, sealed, created_by, created_at`

// SigningArgs are the values of SigningCols for c.
func SigningArgs(c *app.SigningCertificate) []any {
	return []any{c.ID, c.TeamID, c.Name, c.Subject, c.CommonName, c.Issuer, c.Serial, MS(c.NotBefore), MS(c.NotAfter), c.Fingerprint, c.KeyType,
		c.ChainSize, c.Sealed, c.CreatedBy, MS(c.CreatedAt)}
}

// SigningCertificate reads one row of SigningCols; no row is the API's
// certificate-not-found error.
func SigningCertificate(row Row) (*app.SigningCertificate, error) {
	var c app.SigningCertificate
	var nb, na, created int64
	err := row.Scan(&c.ID, &c.TeamID, &c.Name, &c.Subject, &c.CommonName, &c.Issuer, &c.Serial, &nb, &na, &c.Fingerprint, &c.KeyType,
		&c.ChainSize, &c.Sealed, &c.CreatedBy, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeSigningNotFound, "signing certificate")
	} else if err != nil {
		return nil, err
	}
	c.NotBefore, c.NotAfter, c.CreatedAt = FromMS(nb), FromMS(na), FromMS(created)
	return &c, nil
}
