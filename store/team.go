package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"folio/app"
)

var _ app.TeamStore = (*DB)(nil)

func insertTeam(ctx context.Context, tx *sql.Tx, t *app.Team) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO teams (id, name, slug, is_personal, owner_id, plan, credits, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Name, t.Slug, boolInt(t.IsPersonal), t.OwnerID, t.Plan, t.Credits, ms(t.CreatedAt), ms(t.UpdatedAt))
	if isUnique(err, "slug") {
		return (&app.Error{Code: "ERR_TEAM_002", Message: "team slug already exists"}).WithInfo("field", "slug")
	}
	return err
}

// FindTeam finds a live team by id or slug, with its member count.
func (db *DB) FindTeam(ctx context.Context, idOrSlug string) (*app.Team, error) {
	var t app.Team
	var personal int
	var created, updated int64
	err := db.read.QueryRowContext(ctx, `SELECT id, name, slug, is_personal, owner_id, plan, credits, created_at, updated_at,
			(SELECT COUNT(*) FROM members m WHERE m.team_id = teams.id)
		FROM teams WHERE (id = ? OR slug = ?) AND deleted_at IS NULL`, idOrSlug, idOrSlug).
		Scan(&t.ID, &t.Name, &t.Slug, &personal, &t.OwnerID, &t.Plan, &t.Credits, &created, &updated, &t.MemberCount)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeTeamNotFound, "team")
	} else if err != nil {
		return nil, err
	}
	t.IsPersonal = personal == 1
	t.CreatedAt, t.UpdatedAt = fromMS(created), fromMS(updated)
	return &t, nil
}

// FindMember returns a user's membership of a live team; no membership is
// reported as team not found, so non-members learn nothing.
func (db *DB) FindMember(ctx context.Context, teamID, userID string) (*app.Member, error) {
	var m app.Member
	var joined int64
	err := db.read.QueryRowContext(ctx, `SELECT m.team_id, m.user_id, u.email, u.name, m.role, m.joined_at
		FROM members m JOIN teams t ON t.id = m.team_id JOIN users u ON u.id = m.user_id
		WHERE m.team_id = ? AND m.user_id = ? AND t.deleted_at IS NULL`, teamID, userID).
		Scan(&m.TeamID, &m.UserID, &m.Email, &m.Name, &m.Role, &joined)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeTeamNotFound, "team")
	} else if err != nil {
		return nil, err
	}
	m.JoinedAt = fromMS(joined)
	return &m, nil
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
