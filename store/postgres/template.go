package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
)

var _ app.TemplateStore = (*DB)(nil)

// templateInsertCols are the stored columns a new template sets.
const templateInsertCols = `id, team_id, short_id, slug, name, description, template_type, output_formats, schema, variables, constants,
	calculated_variables, sample_data, folder_id, is_published, published_at, created_by, created_at, updated_at`

// templateCols are read by scanTemplate (alias t); category ids are
// computed, in the order they were filed.
const templateCols = `t.id, t.team_id, t.short_id, t.slug, t.name, t.description, t.template_type, t.output_formats, t.schema,
	t.variables, t.constants, t.calculated_variables, t.sample_data, t.folder_id, t.is_published, t.published_at, t.created_by, t.created_at,
	t.updated_at, t.published_version, t.published_hash,
	COALESCE((SELECT json_agg(c.category_id ORDER BY c.seq) FROM template_categories c WHERE c.template_id = t.id)::text, '[]')`

func scanTemplate(row scanner, extra ...any) (*app.Template, error) {
	var t app.Template
	var formats, schema, vars, consts, calc, sample, cats string
	var publishedAt *int64
	var created, updated int64
	err := row.Scan(append([]any{&t.ID, &t.TeamID, &t.ShortID, &t.Slug, &t.Name, &t.Description, &t.TemplateType, &formats, &schema,
		&vars, &consts, &calc, &sample, &t.FolderID, &t.IsPublished, &publishedAt, &t.CreatedBy, &created, &updated, &t.PublishedVersion,
		&t.PublishedHash, &cats}, extra...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeTemplateNotFound, "template")
	} else if err != nil {
		return nil, err
	}
	for _, c := range []struct {
		src string
		dst any
	}{{formats, &t.OutputFormats}, {vars, &t.Variables}, {consts, &t.Constants}, {calc, &t.CalculatedVariables}, {sample, &t.SampleData},
		{cats, &t.CategoryIDs}} {
		if err := json.Unmarshal([]byte(c.src), c.dst); err != nil {
			return nil, fmt.Errorf("template %s: %w", t.ID, err)
		}
	}
	t.Schema = json.RawMessage(schema)
	t.PublishedAt = fromNullMS(publishedAt)
	t.CreatedAt, t.UpdatedAt = fromMS(created), fromMS(updated)
	t.HasDraft = t.PublishedVersion == 0 || contentHash(&t, formats, schema, vars, consts, calc) != t.PublishedHash
	if t.CategoryIDs == nil {
		t.CategoryIDs = []string{}
	}
	return &t, nil
}

// hashes memoizes Template.ContentHash by template, keyed by a 64-bit hash
// of the exact stored columns it is computed from (as package store does).
var hashes = struct {
	sync.Mutex
	m map[string]hashEntry
}{m: map[string]hashEntry{}}

type hashEntry struct {
	columns uint64
	hash    string
}

const maxHashes = 4096

var hashSeed = maphash.MakeSeed()

func contentHash(t *app.Template, formats, schema, vars, consts, calc string) string {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	for _, s := range []string{t.Description, formats, schema, vars, consts, calc} {
		h.WriteString(s)
		h.WriteByte(0)
	}
	cols := h.Sum64()
	hashes.Lock()
	e, ok := hashes.m[t.ID]
	hashes.Unlock()
	if ok && e.columns == cols {
		return e.hash
	}
	sum := t.ContentHash()
	hashes.Lock()
	if len(hashes.m) >= maxHashes {
		clear(hashes.m)
	}
	hashes.m[t.ID] = hashEntry{cols, sum}
	hashes.Unlock()
	return sum
}

// sampleJSON stores sample data as a JSON object, '{}' when there is none.
func sampleJSON(d map[string]any) string {
	if d == nil {
		return "{}"
	}
	return mustJSON(d)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only values that came from JSON are stored
	}
	return string(b)
}

// CreateTemplate inserts a template with its categories; a taken slug gets a
// numeric suffix, a taken name is ERR_TMPL_011, a team at its plan's template
// count is ERR_PLAN_002. The plan count locks the team, so the slug check
// after it sees every other insert of the team.
func (db *DB) CreateTemplate(ctx context.Context, t *app.Template) error {
	return db.metaTx(ctx, func(tx pgx.Tx) error {
		if err := checkPlanCount(ctx, tx, t.TeamID, app.ResourceTemplates,
			`SELECT COUNT(*) FROM templates WHERE team_id = $1 AND deleted_at IS NULL`, t.TeamID); err != nil {
			return err
		}
		base := t.Slug
		for i := 2; ; i++ {
			var n int
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM templates WHERE team_id = $1 AND slug = $2 AND deleted_at IS NULL`, t.TeamID, t.Slug).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				break
			}
			suffix := fmt.Sprintf("-%d", i)
			t.Slug = strings.TrimRight(truncate(base, app.MaxTemplateSlug-len(suffix)), "-") + suffix
		}
		_, err := tx.Exec(ctx, `INSERT INTO templates (`+templateInsertCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
			t.ID, t.TeamID, t.ShortID, t.Slug, t.Name, t.Description, t.TemplateType, mustJSON(t.OutputFormats), string(t.Schema),
			mustJSON(t.Variables), mustJSON(t.Constants), mustJSON(t.CalculatedVariables), sampleJSON(t.SampleData), t.FolderID, t.IsPublished,
			msPtr(t.PublishedAt), t.CreatedBy, ms(t.CreatedAt), ms(t.UpdatedAt))
		if isUnique(err, "templates_team_name") {
			return (&app.Error{Code: app.ECodeTemplateExists, Message: "a template named " + t.Name + " already exists"}).WithInfo("field", "name")
		} else if err != nil {
			return err
		}
		for _, c := range t.CategoryIDs {
			if _, err := tx.Exec(ctx, `INSERT INTO template_categories (template_id, category_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, t.ID, c); err != nil {
				return err
			}
		}
		return writeAssetRefs(ctx, tx, t.TeamID, t.ID, 0, t.Schema)
	})
}

// writeAssetRefs records the asset references of a template's working copy
// (version 0, replacing the previous ones) or of a published version.
func writeAssetRefs(ctx context.Context, tx pgx.Tx, teamID, templateID string, version int, schema json.RawMessage) error {
	if version == 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM template_asset_refs WHERE template_id = $1 AND version = 0`, templateID); err != nil {
			return err
		}
	}
	for _, ref := range app.AssetRefs(schema) {
		if _, err := tx.Exec(ctx, `INSERT INTO template_asset_refs (template_id, version, team_id, ref) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
			templateID, version, teamID, ref); err != nil {
			return err
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// FindTemplate finds a live template of a team by id, shortId or slug.
func (db *DB) FindTemplate(ctx context.Context, teamID, ref string) (*app.Template, error) {
	return findTemplate(ctx, db.pool, teamID, ref)
}

func findTemplate(ctx context.Context, q querier, teamID, ref string) (*app.Template, error) {
	return scanTemplate(q.QueryRow(ctx, `SELECT `+templateCols+` FROM templates t
		WHERE t.team_id = $1 AND t.deleted_at IS NULL AND (t.id = $2 OR t.short_id = $2 OR t.slug = $2)
		ORDER BY t.id = $2 DESC, t.short_id = $2 DESC LIMIT 1`, teamID, ref))
}

// FindVisibleTemplate finds a live template the team owns, else one a live
// team shares with it (by id or shortId: slugs are only unique per team).
func (db *DB) FindVisibleTemplate(ctx context.Context, teamID, ref string) (*app.Template, error) {
	t, err := findTemplate(ctx, db.pool, teamID, ref)
	if app.ErrorCode(err) != app.ECodeTemplateNotFound {
		return t, err
	}
	var perm string
	t, err = scanTemplate(db.pool.QueryRow(ctx, `SELECT `+templateCols+`, s.permission FROM templates t
		JOIN template_shares s ON s.template_id = t.id
		JOIN teams o ON o.id = t.team_id AND o.deleted_at IS NULL
		WHERE s.target_team_id = $1 AND t.deleted_at IS NULL AND (t.id = $2 OR t.short_id = $2) LIMIT 1`, teamID, ref), &perm)
	if err != nil {
		return nil, err
	}
	t.Permission = perm
	return t, nil
}

// FindTemplateByName finds a live template of a team by its exact name.
func (db *DB) FindTemplateByName(ctx context.Context, teamID, name string) (*app.Template, error) {
	return scanTemplate(db.pool.QueryRow(ctx, `SELECT `+templateCols+` FROM templates t
		WHERE t.team_id = $1 AND t.name = $2 AND t.deleted_at IS NULL`, teamID, name))
}

// asciiLower folds A-Z only: SQLite's LIKE ignores the case of ASCII
// letters and no others, and so does the search here, whatever the
// database's collation would do with lower() or ILIKE.
const asciiUpper, asciiLowerSet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// FindTemplates lists a team's live templates, newest first.
func (db *DB) FindTemplates(ctx context.Context, f app.TemplateFilter) ([]*app.Template, int, error) {
	where, args := []string{"t.team_id = $1", "t.deleted_at IS NULL"}, []any{f.TeamID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "$?", fmt.Sprintf("$%d", len(args))))
	}
	if f.Search != "" {
		add(`translate(t.name, '`+asciiUpper+`', '`+asciiLowerSet+`') LIKE $? ESCAPE '\'`, "%"+asciiLower(likeEscape(f.Search))+"%")
	}
	if f.FolderID != "" {
		add("t.folder_id = $?", f.FolderID)
	}
	if f.CategoryID != "" {
		add("EXISTS (SELECT 1 FROM template_categories c WHERE c.template_id = t.id AND c.category_id = $?)", f.CategoryID)
	}
	if f.TemplateType != "" {
		add("t.template_type = $?", f.TemplateType)
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM templates t WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	limit := f.Page.Limit
	if limit <= 0 {
		limit = app.DefaultLimit
	}
	n := len(args)
	rows, err := db.pool.Query(ctx, `SELECT `+templateCols+` FROM templates t WHERE `+cond+
		fmt.Sprintf(` ORDER BY t.created_at DESC, t.seq DESC LIMIT $%d OFFSET $%d`, n+1, n+2), append(args, limit, max(f.Page.Offset(), 0))...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	list := []*app.Template{}
	for rows.Next() {
		t, err := scanTemplate(rows)
		if err != nil {
			return nil, 0, err
		}
		list = append(list, t)
	}
	return list, total, rows.Err()
}

// UpdateTemplate writes the editable fields of a live template.
func (db *DB) UpdateTemplate(ctx context.Context, t *app.Template) error {
	return db.metaTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE templates SET name = $1, slug = $2, description = $3, output_formats = $4, schema = $5,
			variables = $6, constants = $7, calculated_variables = $8, sample_data = $9, folder_id = $10, updated_at = $11 WHERE id = $12 AND deleted_at IS NULL`,
			t.Name, t.Slug, t.Description, mustJSON(t.OutputFormats), string(t.Schema), mustJSON(t.Variables), mustJSON(t.Constants),
			mustJSON(t.CalculatedVariables), sampleJSON(t.SampleData), t.FolderID, ms(t.UpdatedAt), t.ID)
		switch {
		case isUnique(err, "templates_team_name"):
			return (&app.Error{Code: app.ECodeTemplateExists, Message: "a template named " + t.Name + " already exists"}).WithInfo("field", "name")
		case isUnique(err, "templates_team_slug"):
			return app.ErrInvalid("slug", "another template of the team has the slug %q", t.Slug)
		case err != nil:
			return err
		}
		if tag.RowsAffected() == 0 {
			return app.ErrNotFound(app.ECodeTemplateNotFound, "template")
		}
		return writeAssetRefs(ctx, tx, t.TeamID, t.ID, 0, t.Schema)
	})
}

// DeleteTemplates soft-deletes the team's live templates among ids and ends
// their shares; versions, categories and jobs stay.
func (db *DB) DeleteTemplates(ctx context.Context, teamID string, ids []string, by string, now time.Time) ([]string, error) {
	var gone []string
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
		gone = nil
		for _, id := range ids {
			tag, err := tx.Exec(ctx, `UPDATE templates SET deleted_at = $1, deleted_by = $2, updated_at = $1
				WHERE team_id = $3 AND id = $4 AND deleted_at IS NULL`, ms(now), by, teamID, id)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				continue
			}
			if _, err := tx.Exec(ctx, `DELETE FROM template_shares WHERE template_id = $1`, id); err != nil {
				return err
			}
			gone = append(gone, id)
		}
		return nil
	})
	return gone, err
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
