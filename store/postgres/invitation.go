package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.InvitationStore = (*DB)(nil)

// findInvitations lists invitations matching where, whose parameters are
// args ($1...), newest first.
func (db *DB) findInvitations(ctx context.Context, where string, now time.Time, pg app.Page, args ...any) ([]*app.Invitation, int, error) {
	var total int
	if err := db.pool.QueryRow(ctx, `SELECT COUNT(*)`+scan.InvitationFrom+`WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.pool.Query(ctx, `SELECT `+scan.InvitationCols+scan.InvitationFrom+`WHERE `+where+
		` ORDER BY i.created_at DESC, i.seq DESC LIMIT $3 OFFSET $4`, append(args, pg.Limit, pg.Offset())...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out, err := scan.List(rows, scan.InvitationAt(now))
	return out, total, err
}

// CreateInvitation stores a pending invitation after checking, in the same
// transaction, that the address is not a member and not already invited, and
// that members plus live pending invitations are below the plan's member
// count (ERR_PLAN_002; the count locks the team's row).
func (db *DB) CreateInvitation(ctx context.Context, inv *app.Invitation, now time.Time) error {
	return db.tx(ctx, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM members m JOIN users u ON u.id = m.user_id
			WHERE m.team_id = $1 AND u.email = $2`, inv.TeamID, inv.Email).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return (&app.Error{Code: app.ECodeAlreadyMember, Message: inv.Email + " is already a member of the team"}).WithInfo("field", "email")
		}
		// An expired invitation no longer blocks a new one.
		if _, err := tx.Exec(ctx, `UPDATE invitations SET status = 'expired', updated_at = $1
			WHERE team_id = $2 AND email = $3 AND status = 'pending' AND expires_at <= $1`, ms(now), inv.TeamID, inv.Email); err != nil {
			return err
		}
		if err := checkPlanCount(ctx, tx, inv.TeamID, app.ResourceMembers, `SELECT (SELECT COUNT(*) FROM members WHERE team_id = $1) +
			(SELECT COUNT(*) FROM invitations WHERE team_id = $1 AND status = 'pending' AND expires_at > $2)`, inv.TeamID, ms(now)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO invitations (id, team_id, email, role, status, invited_by, expires_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
			inv.ID, inv.TeamID, inv.Email, inv.Role, app.InvitePending, inv.InvitedByID, ms(inv.ExpiresAt), ms(inv.CreatedAt))
		if isUnique(err, "invitations_pending") {
			return (&app.Error{Code: app.ECodeAlreadyInvited, Message: "an invitation was already sent to " + inv.Email}).WithInfo("field", "email")
		}
		return err
	})
}

// FindInvitation returns an invitation of a live team.
func (db *DB) FindInvitation(ctx context.Context, id string, now time.Time) (*app.Invitation, error) {
	return scan.Invitation(db.pool.QueryRow(ctx, `SELECT `+scan.InvitationCols+scan.InvitationFrom+
		`WHERE i.id = $1 AND t.deleted_at IS NULL`, id), now)
}

// FindTeamInvitations lists a team's live pending invitations.
func (db *DB) FindTeamInvitations(ctx context.Context, teamID string, now time.Time, pg app.Page) ([]*app.Invitation, int, error) {
	return db.findInvitations(ctx, `i.team_id = $1 AND i.status = 'pending' AND i.expires_at > $2`, now, pg, teamID, ms(now))
}

// FindInvitationsByEmail lists the live pending invitations to an address.
func (db *DB) FindInvitationsByEmail(ctx context.Context, email string, now time.Time, pg app.Page) ([]*app.Invitation, int, error) {
	return db.findInvitations(ctx, `i.email = $1 AND i.status = 'pending' AND i.expires_at > $2 AND t.deleted_at IS NULL`, now, pg, email, ms(now))
}

// AcceptInvitation turns a live pending invitation into a membership, unless
// the team already has its plan's member count (ERR_PLAN_002; possible after
// a change to a smaller plan). The invitation's row is locked: of two
// replicas accepting it at once, the second finds it accepted.
func (db *DB) AcceptInvitation(ctx context.Context, id, userID string, now time.Time) (*app.Member, error) {
	var m *app.Member
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
		inv, err := scan.Invitation(tx.QueryRow(ctx, `SELECT `+scan.InvitationCols+scan.InvitationFrom+
			`WHERE i.id = $1 AND t.deleted_at IS NULL FOR UPDATE OF i`, id), now)
		if err != nil {
			return err
		}
		switch inv.Status {
		case app.InviteExpired:
			return &app.Error{Code: app.ECodeInvitationExpired, Message: "the invitation expired; ask for a new one"}
		case app.InvitePending:
		default:
			return app.ErrNotFound(app.ECodeInvitationNotFound, "invitation")
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM members WHERE team_id = $1 AND user_id = $2`, inv.TeamID, userID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return &app.Error{Code: app.ECodeAlreadyMember, Message: "you are already a member of the team"}
		}
		if err := checkPlanCount(ctx, tx, inv.TeamID, app.ResourceMembers, `SELECT COUNT(*) FROM members WHERE team_id = $1`, inv.TeamID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE invitations SET status = 'accepted', updated_at = $1 WHERE id = $2`, ms(now), id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO members (team_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4)`,
			inv.TeamID, userID, inv.Role, ms(now)); err != nil {
			return err
		}
		m, err = findMember(ctx, tx, inv.TeamID, userID)
		return err
	})
	return m, err
}

// CloseInvitation moves a pending invitation to rejected or cancelled.
func (db *DB) CloseInvitation(ctx context.Context, id, status string, now time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE invitations SET status = $1, updated_at = $2 WHERE id = $3 AND status = 'pending'`, status, ms(now), id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return app.ErrNotFound(app.ECodeInvitationNotFound, "invitation")
	}
	return nil
}
