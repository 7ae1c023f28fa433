package scan

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"

	"folio/app"
)

// TemplateInsertCols are the stored columns a new template sets.
const TemplateInsertCols = `id, team_id, short_id, slug, name, description, template_type, output_formats, schema, variables, constants,
	calculated_variables, sample_data, folder_id, is_published, published_at, created_by, created_at, updated_at`

// TemplateCols are read by Template (alias t), followed in each backend by
// one more column: the template's category ids as a JSON array, in the
// order they were filed (the aggregate is written per engine).
const TemplateCols = `t.id, t.team_id, t.short_id, t.slug, t.name, t.description, t.template_type, t.output_formats, t.schema,
	t.variables, t.constants, t.calculated_variables, t.sample_data, t.folder_id, t.is_published, t.published_at, t.created_by, t.created_at,
	t.updated_at, t.published_version, t.published_hash`

// Template reads one row of TemplateCols, the category ids, then extra.
func Template(row Row, extra ...any) (*app.Template, error) {
	var t app.Template
	var formats, schema, vars, consts, calc, sample, cats string
	var folder sql.NullString
	var publishedAt sql.NullInt64
	var created, updated int64
	err := row.Scan(append([]any{&t.ID, &t.TeamID, &t.ShortID, &t.Slug, &t.Name, &t.Description, &t.TemplateType, &formats, &schema,
		&vars, &consts, &calc, &sample, &folder, &t.IsPublished, &publishedAt, &t.CreatedBy, &created, &updated, &t.PublishedVersion,
		&t.PublishedHash, &cats}, extra...)...)
	if errors.Is(err, sql.ErrNoRows) {
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
	if folder.Valid {
		t.FolderID = &folder.String
	}
	t.PublishedAt = FromNullMS(publishedAt)
	t.CreatedAt, t.UpdatedAt = FromMS(created), FromMS(updated)
	t.HasDraft = t.PublishedVersion == 0 || contentHash(&t, formats, schema, vars, consts, calc) != t.PublishedHash
	if t.CategoryIDs == nil {
		t.CategoryIDs = []string{}
	}
	return &t, nil
}

// hashes memoizes Template.ContentHash by template, keyed by a 64-bit hash
// of the exact stored columns it is computed from: every read of a
// published template (two per generate) hashed its whole content anew,
// ~60 µs for the example invoice.
var hashes = struct {
	sync.Mutex
	m map[string]hashEntry
}{m: map[string]hashEntry{}}

type hashEntry struct {
	columns uint64 // maphash of the columns ContentHash reads
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

// JSON is v as stored in a TEXT column of JSON.
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only values that came from JSON are stored
	}
	return string(b)
}

// SampleJSON stores sample data as a JSON object, '{}' when there is none.
func SampleJSON(d map[string]any) string {
	if d == nil {
		return "{}"
	}
	return JSON(d)
}

// TemplateRow is Template without extra columns, for List.
func TemplateRow(row Row) (*app.Template, error) { return Template(row) }
