package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

func findMember(ctx context.Context, q querier, teamID, userID string) (*app.Member, error) {
	return scan.Member(q.QueryRow(ctx, `SELECT `+scan.MemberCols+scan.MemberFrom+`
		WHERE m.team_id = $1 AND m.user_id = $2`, teamID, userID))
}

// FindMembers lists a team's members: the owner first, then by joining date.
func (db *DB) FindMembers(ctx context.Context, teamID string, pg app.Page) ([]*app.Member, int, error) {
	var total int
	if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM members WHERE team_id = $1`, teamID).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.pool.Query(ctx, `SELECT `+scan.MemberCols+scan.MemberFrom+`
		WHERE m.team_id = $1 ORDER BY m.role != 'owner', m.joined_at, m.seq LIMIT $2 OFFSET $3`, teamID, pg.Limit, pg.Offset())
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
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE members SET role = $1 WHERE team_id = $2 AND user_id = $3 AND role != 'owner'`, role, teamID, userID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
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
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM members WHERE team_id = $1 AND user_id = $2 AND role != 'owner'`, teamID, userID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return app.ErrNotFound(app.ECodeMemberNotFound, "team member")
		}
		tag, err = tx.Exec(ctx, `UPDATE api_keys SET is_active = false, updated_at = $1 WHERE is_active AND team_id = $2 AND created_by = $3`,
			ms(now), teamID, userID)
		keys = tag.RowsAffected()
		return err
	})
	return int(keys), err
}
