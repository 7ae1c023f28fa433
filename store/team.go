package store

import (
	"context"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.TeamStore = (*DB)(nil)

func insertTeam(ctx context.Context, tx *Tx, t *app.Team) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO teams (`+scan.TeamInsertCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Name, t.Slug, t.IsPersonal, t.OwnerID, t.Plan, t.Credits, ms(t.CreatedAt), ms(t.UpdatedAt))
	if isUnique(err, "slug") {
		return app.ErrTeamSlugTaken()
	}
	return err
}

func findTeam(ctx context.Context, q querier, idOrSlug string) (*app.Team, error) {
	return scan.Team(q.queryRow(ctx, `SELECT `+scan.TeamCols+` FROM teams WHERE (id = ? OR slug = ?) AND deleted_at IS NULL`, idOrSlug, idOrSlug))
}

// FindTeam finds a live team by id or slug, with its member count.
func (db *DB) FindTeam(ctx context.Context, idOrSlug string) (*app.Team, error) {
	return findTeam(ctx, db.read, idOrSlug)
}

// FindMember returns a user's membership of a live team; no membership is
// reported as team not found, so non-members learn nothing.
func (db *DB) FindMember(ctx context.Context, teamID, userID string) (*app.Member, error) {
	m, err := scan.Member(db.read.QueryRowContext(ctx, `SELECT `+scan.MemberCols+scan.MemberFrom+`JOIN teams t ON t.id = m.team_id
		WHERE m.team_id = ? AND m.user_id = ? AND t.deleted_at IS NULL`, teamID, userID))
	if app.ErrorCode(err) == app.ECodeMemberNotFound {
		return nil, app.ErrNotFound(app.ECodeTeamNotFound, "team")
	}
	return m, err
}

// SetTeamPlan changes a team's plan.
func (db *DB) SetTeamPlan(ctx context.Context, teamID, plan string, now time.Time) error {
	return db.updateTeam(ctx, `UPDATE teams SET plan = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`, plan, ms(now), teamID)
}

// AddTeamCredits adds document credits to a team.
func (db *DB) AddTeamCredits(ctx context.Context, teamID string, n int64, now time.Time) error {
	return db.updateTeam(ctx, `UPDATE teams SET credits = credits + ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`, n, ms(now), teamID)
}

func (db *DB) updateTeam(ctx context.Context, query string, args ...any) error {
	res, err := db.write.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.ErrNotFound(app.ECodeTeamNotFound, "team")
	}
	return nil
}

// CreateTeam inserts a team and its owner's membership.
func (db *DB) CreateTeam(ctx context.Context, t *app.Team) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := insertTeam(ctx, tx, t); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO members (team_id, user_id, role, joined_at) VALUES (?, ?, ?, ?)`,
			t.ID, t.OwnerID, app.RoleOwner, ms(t.CreatedAt))
		return err
	})
}

// FindTeamsForUser lists a user's live teams, personal first, then by age.
func (db *DB) FindTeamsForUser(ctx context.Context, userID string, pg app.Page) ([]*app.Team, int, error) {
	var total int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM members m JOIN teams ON teams.id = m.team_id
		WHERE m.user_id = ? AND teams.deleted_at IS NULL`, userID).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+scan.TeamCols+`, m.role FROM members m JOIN teams ON teams.id = m.team_id
		WHERE m.user_id = ? AND teams.deleted_at IS NULL
		ORDER BY teams.is_personal DESC, teams.created_at, teams.rowid LIMIT ? OFFSET ?`, userID, pg.Limit, pg.Offset())
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	teams, err := scan.List(rows, scan.TeamWithRole)
	return teams, total, err
}

// UpdateTeam changes name and slug and returns the team.
func (db *DB) UpdateTeam(ctx context.Context, id string, upd app.TeamUpdate, now time.Time) (*app.Team, error) {
	var t *app.Team
	err := db.tx(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE teams SET name = COALESCE(?, name), slug = COALESCE(?, slug), updated_at = ?
			WHERE id = ? AND deleted_at IS NULL`, upd.Name, upd.Slug, ms(now), id)
		if isUnique(err, "slug") {
			return app.ErrTeamSlugTaken()
		} else if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return app.ErrNotFound(app.ECodeTeamNotFound, "team")
		}
		t, err = findTeam(ctx, tx, id)
		return err
	})
	return t, err
}

// DeleteTeam soft-deletes a team. Its slug is freed for reuse and its
// pending invitations are cancelled; its members and keys stop resolving
// because every lookup skips deleted teams.
func (db *DB) DeleteTeam(ctx context.Context, id string, now time.Time) error {
	return db.tx(ctx, func(tx *Tx) error {
		return deleteTeam(ctx, tx, id, now)
	})
}

func deleteTeam(ctx context.Context, tx *Tx, id string, now time.Time) error {
	res, err := tx.ExecContext(ctx, `UPDATE teams SET deleted_at = ?, updated_at = ?, slug = 'deleted-' || id
		WHERE id = ? AND deleted_at IS NULL`, ms(now), ms(now), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.ErrNotFound(app.ECodeTeamNotFound, "team")
	}
	_, err = tx.ExecContext(ctx, `UPDATE invitations SET status = 'cancelled', updated_at = ? WHERE team_id = ? AND status = 'pending'`, ms(now), id)
	return err
}
