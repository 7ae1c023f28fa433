package store

import (
	"context"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

func findMember(ctx context.Context, q querier, teamID, userID string) (*app.Member, error) {
	return scan.Member(q.queryRow(ctx, `SELECT `+scan.MemberCols+scan.MemberFrom+`
		WHERE m.team_id = ? AND m.user_id = ?`, teamID, userID))
}

// FindMembers lists a team's members: the owner first, then by joining date.
func (db *DB) FindMembers(ctx context.Context, teamID string, pg app.Page) ([]*app.Member, int, error) {
	var total int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM members WHERE team_id = ?`, teamID).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+scan.MemberCols+scan.MemberFrom+`
		WHERE m.team_id = ? ORDER BY m.role != 'owner', m.joined_at, m.rowid LIMIT ? OFFSET ?`, teamID, pg.Limit, pg.Offset())
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	members, err := scan.List(rows, scan.Member)
	return members, total, err
}

// UpdateMemberRole sets the role of a member other than the owner.
func (db *DB) UpdateMemberRole(ctx context.Context, teamID, userID, role string, now time.Time) (*app.Member, error) {
	var m *app.Member
	err := db.tx(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE members SET role = ? WHERE team_id = ? AND user_id = ? AND role != 'owner'`, role, teamID, userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return app.ErrNotFound(app.ECodeMemberNotFound, "team member")
		}
		m, err = findMember(ctx, tx, teamID, userID)
		return err
	})
	return m, err
}

// RemoveMember deletes a membership (never the owner's) and deactivates the
// API keys the member created for the team.
func (db *DB) RemoveMember(ctx context.Context, teamID, userID string, now time.Time) (int, error) {
	var keys int64
	err := db.tx(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM members WHERE team_id = ? AND user_id = ? AND role != 'owner'`, teamID, userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return app.ErrNotFound(app.ECodeMemberNotFound, "team member")
		}
		keys, err = deactivateKeys(ctx, tx, `team_id = ? AND created_by = ?`, ms(now), teamID, userID)
		return err
	})
	return int(keys), err
}

// deactivateKeys deactivates the active API keys matching where.
func deactivateKeys(ctx context.Context, tx *Tx, where string, now int64, args ...any) (int64, error) {
	res, err := tx.ExecContext(ctx, `UPDATE api_keys SET is_active = 0, updated_at = ? WHERE is_active = 1 AND `+where,
		append([]any{now}, args...)...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
