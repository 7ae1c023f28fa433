package transfer

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"folio/store/internal/scan"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// notFromSQLite are the PostgreSQL tables that no SQLite table fills, and
// why; the bbolt and key tables are filled by copyBolt and copyKeys.
var notFromSQLite = map[string]string{
	"schema_migrations": "each database records its own migrations",
	"meta_generation":   "each database keeps its own metadata generation counter",
	"queue_entries":     "", // the bbolt queue (copyBolt)
	"webhook_schedule":  "", // the bbolt schedule (copyBolt)
}

// sqliteOnly are the SQLite tables deliberately left behind, and why.
var sqliteOnly = map[string]string{
	"migrations":        "each database records its own migrations",
	"meta_generation":   "each database keeps its own metadata generation counter",
	"rollup_backfill":   "the progress of SQLite's roll-up backfill, complete before the copy",
	"step_bookkeeping":  "a marker SQLite's janitor sets only while it runs",
	"sqlite_sequence":   "SQLite's own",
	"job_list_hours":    "SQLite's hourly counts of job rows for deep pages of the job list; PostgreSQL counts with its indexes",
	"job_count_pending": "counts waiting for SQLite's roll-ups, folded into them when prepareSQLite closes the database",
}

// sqliteOnlyColumns are SQLite columns deliberately left behind, by table.
var sqliteOnlyColumns = map[string]map[string]bool{
	// Where a document's bytes are in docs/ (store/docseg.go): empty once
	// prepareSQLite has put the bytes back into data.
	"job_files": {"seg": true, "seg_off": true, "seg_len": true, "seg_crc": true},
}

// packedColumns are the SQLite columns whose values may be packed JSON
// (scan.PackJSON), by table: PostgreSQL holds their text.
var packedColumns = map[string]map[string]bool{
	"jobs": {"variables": true},
}

// pgColumn is a column of a PostgreSQL table.
type pgColumn struct {
	name, dataType string
	identity       bool // GENERATED ... AS IDENTITY
	optional       bool // nullable or with a default: may be left out
}

// pgTable is a PostgreSQL table and what the copy needs of it.
type pgTable struct {
	name     string
	columns  []pgColumn
	deps     []string // tables its foreign keys reference
	unique   bool     // has a primary key or unique constraint (ON CONFLICT can dedupe)
	triggers bool     // has triggers of its own (disabled while rows are copied)
}

// pgSchema reads the tables of the database's current schema.
func pgSchema(ctx context.Context, pool *pgxpool.Pool) (map[string]*pgTable, error) {
	tables := map[string]*pgTable{}
	rows, err := pool.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type, c.is_identity = 'YES',
		c.is_nullable = 'YES' OR c.column_default IS NOT NULL OR c.is_identity = 'YES'
		FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
		ORDER BY c.table_name, c.ordinal_position`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var table string
		var c pgColumn
		if err := rows.Scan(&table, &c.name, &c.dataType, &c.identity, &c.optional); err != nil {
			rows.Close()
			return nil, err
		}
		t := tables[table]
		if t == nil {
			t = &pgTable{name: table}
			tables[table] = t
		}
		t.columns = append(t.columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = pool.Query(ctx, `SELECT cl.relname, con.contype::text, COALESCE(ref.relname, '')
		FROM pg_constraint con
		JOIN pg_class cl ON cl.oid = con.conrelid
		JOIN pg_namespace n ON n.oid = cl.relnamespace AND n.nspname = current_schema()
		LEFT JOIN pg_class ref ON ref.oid = con.confrelid
		WHERE con.contype IN ('p', 'u', 'f')
		UNION ALL
		SELECT cl.relname, 'u', '' FROM pg_index i
		JOIN pg_class cl ON cl.oid = i.indrelid
		JOIN pg_namespace n ON n.oid = cl.relnamespace AND n.nspname = current_schema()
		WHERE i.indisunique
		UNION ALL
		SELECT cl.relname, 't', '' FROM pg_trigger tg
		JOIN pg_class cl ON cl.oid = tg.tgrelid
		JOIN pg_namespace n ON n.oid = cl.relnamespace AND n.nspname = current_schema()
		WHERE NOT tg.tgisinternal`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var table, kind, ref string
		if err := rows.Scan(&table, &kind, &ref); err != nil {
			rows.Close()
			return nil, err
		}
		t := tables[table]
		if t == nil {
			continue
		}
		switch kind {
		case "p", "u":
			t.unique = true
		case "f":
			if ref != table && !slices.Contains(t.deps, ref) {
				t.deps = append(t.deps, ref)
			}
		case "t":
			t.triggers = true
		}
	}
	return tables, rows.Err()
}

// dependencyOrder sorts tables so that each comes after those its foreign
// keys reference, by name otherwise.
func dependencyOrder(tables map[string]*pgTable) []string {
	names := make([]string, 0, len(tables))
	for n := range tables {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	done := map[string]bool{}
	visiting := map[string]bool{}
	var visit func(n string)
	visit = func(n string) {
		if done[n] || visiting[n] {
			return // a cycle: the order among its tables is by name
		}
		visiting[n] = true
		deps := slices.Clone(tables[n].deps)
		sort.Strings(deps)
		for _, d := range deps {
			if tables[d] != nil {
				visit(d)
			}
		}
		visiting[n] = false
		done[n] = true
		out = append(out, n)
	}
	for _, n := range names {
		visit(n)
	}
	return out
}

// sqliteTable is a SQLite table: its columns and whether it has a rowid.
type sqliteTable struct {
	columns []string
	rowid   bool
}

// sqliteSchema reads the tables (not views) of the SQLite database.
func sqliteSchema(ctx context.Context, tx *sql.Tx) (map[string]*sqliteTable, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name, wr FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return nil, err
	}
	tables := map[string]*sqliteTable{}
	for rows.Next() {
		var name string
		var withoutRowid bool
		if err := rows.Scan(&name, &withoutRowid); err != nil {
			rows.Close()
			return nil, err
		}
		tables[name] = &sqliteTable{rowid: !withoutRowid}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for name, t := range tables {
		rows, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, name)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return nil, err
			}
			t.columns = append(t.columns, c)
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return tables, nil
}

// tableCopy is the plan for one table: which PostgreSQL columns receive
// which SQLite expressions.
type tableCopy struct {
	pg      *pgTable
	targets []pgColumn // PostgreSQL columns written
	sources []string   // the SQLite expression of each
	seq     string     // the identity column filled from the rowid ("" if none)
	resume  bool       // rows go in rowid order, so a rerun starts after max(seq)
}

// planTable matches a PostgreSQL table's columns with a SQLite table's:
// same names, and the identity column seq from the rowid. It returns
// the problems: SQLite columns PostgreSQL lacks, required PostgreSQL
// columns SQLite lacks.
func planTable(pg *pgTable, lite *sqliteTable) (*tableCopy, []string) {
	tc := &tableCopy{pg: pg}
	var problems []string
	has := map[string]bool{}
	for _, c := range lite.columns {
		has[c] = true
	}
	pgHas := map[string]bool{}
	for _, c := range pg.columns {
		pgHas[c.name] = true
		switch {
		case has[c.name]:
			tc.targets = append(tc.targets, c)
			tc.sources = append(tc.sources, quoteLite(c.name))
		case c.identity && c.name == "seq" && lite.rowid:
			tc.targets = append(tc.targets, c)
			tc.sources = append(tc.sources, "rowid")
			tc.seq, tc.resume = c.name, true
		case c.identity:
			tc.seq = c.name // generated here; reset after the copy all the same
		case !c.optional:
			problems = append(problems, fmt.Sprintf("%s.%s: PostgreSQL requires it and SQLite has no such column", pg.name, c.name))
		}
	}
	for _, c := range lite.columns {
		if !pgHas[c] && !sqliteOnlyColumns[pg.name][c] {
			problems = append(problems, fmt.Sprintf("%s.%s: the PostgreSQL table has no such column", pg.name, c))
		}
	}
	if !pg.unique {
		problems = append(problems, fmt.Sprintf("%s: the PostgreSQL table has no primary key or unique constraint, so a rerun could not tell copied rows", pg.name))
	}
	return tc, problems
}

// copyTables copies every table both databases have, then checks counts.
func copyTables(ctx context.Context, o Options, stx *sql.Tx, pool *pgxpool.Pool, r *Report) error {
	pg, err := pgSchema(ctx, pool)
	if err != nil {
		return fmt.Errorf("read the PostgreSQL schema: %w", err)
	}
	lite, err := sqliteSchema(ctx, stx)
	if err != nil {
		return fmt.Errorf("read the SQLite schema: %w", err)
	}
	// SQLite tables with nowhere to go.
	var liteNames []string
	for n := range lite {
		liteNames = append(liteNames, n)
	}
	sort.Strings(liteNames)
	for _, n := range liteNames {
		if pg[n] != nil {
			continue
		}
		if why, ok := sqliteOnly[n]; ok {
			r.note("%s: not copied (%s)", n, why)
			continue
		}
		count, err := countLite(ctx, stx, n)
		if err != nil {
			return err
		}
		if count > 0 {
			r.problem("%s: %d rows, and the PostgreSQL schema has no such table yet (this folio cannot move it)", n, count)
		} else {
			r.note("%s: empty, and the PostgreSQL schema has no such table yet", n)
		}
	}
	for _, n := range dependencyOrder(pg) {
		if _, ok := notFromSQLite[n]; ok || lite[n] == nil || sqliteOnly[n] != "" {
			continue
		}
		tc, problems := planTable(pg[n], lite[n])
		if len(problems) > 0 {
			r.Problems = append(r.Problems, problems...)
			continue
		}
		t, err := copyTable(ctx, o, stx, pool, tc)
		if err != nil {
			return fmt.Errorf("copy %s: %w", n, err)
		}
		r.Tables = append(r.Tables, t)
		fmt.Fprintf(o.Log, "%s: %d rows, %d copied by this run\n", n, t.Source, t.Copied)
		if t.Source != t.Target {
			r.problem("%s: SQLite has %d rows, PostgreSQL %d", n, t.Source, t.Target)
		}
	}
	return nil
}

func countLite(ctx context.Context, stx *sql.Tx, table string) (int64, error) {
	var n int64
	err := stx.QueryRowContext(ctx, `SELECT count(*) FROM `+quoteLite(table)).Scan(&n)
	return n, err
}

func countPG(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, table string) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&n)
	return n, err
}

// copyTable copies one table in batches, each its own transaction, with
// the table's triggers off (the roll-ups and counters they keep are
// copied as rows), and resets the identity column past the copied rows.
func copyTable(ctx context.Context, o Options, stx *sql.Tx, pool *pgxpool.Pool, tc *tableCopy) (Table, error) {
	name := tc.pg.name
	t := Table{Name: name, From: "sqlite"}
	var err error
	if t.Source, err = countLite(ctx, stx, name); err != nil {
		return t, err
	}
	if t.Target, err = countPG(ctx, pool, name); err != nil {
		return t, err
	}
	if t.Target < t.Source {
		if err := copyRows(ctx, o, stx, pool, tc, &t); err != nil {
			return t, err
		}
		if t.Target, err = countPG(ctx, pool, name); err != nil {
			return t, err
		}
	}
	if tc.seq != "" {
		id := pgx.Identifier{name}.Sanitize()
		col := pgx.Identifier{tc.seq}.Sanitize()
		if _, err := pool.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, $2), COALESCE((SELECT max(`+col+`) FROM `+id+`), 0) + 1, false)`, id, tc.seq); err != nil {
			return t, fmt.Errorf("reset %s.%s: %w", name, tc.seq, err)
		}
	}
	return t, nil
}

func copyRows(ctx context.Context, o Options, stx *sql.Tx, pool *pgxpool.Pool, tc *tableCopy, t *Table) error {
	name := tc.pg.name
	id := pgx.Identifier{name}.Sanitize()
	query := `SELECT ` + strings.Join(tc.sources, ", ") + ` FROM ` + quoteLite(name)
	var args []any
	if tc.resume {
		// Batches commit in rowid order, so the target's largest seq is
		// where an interrupted run stopped.
		var after int64
		if err := pool.QueryRow(ctx, `SELECT COALESCE(max(`+pgx.Identifier{tc.seq}.Sanitize()+`), 0) FROM `+id).Scan(&after); err != nil {
			return err
		}
		query += ` WHERE rowid > ? ORDER BY rowid`
		args = append(args, after)
	}
	rows, err := stx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := len(tc.targets)
	cols := make([]string, n)
	quoted := make([]string, n)
	for i, c := range tc.targets {
		cols[i] = c.name
		quoted[i] = pgx.Identifier{c.name}.Sanitize()
	}
	list := strings.Join(quoted, ", ")
	// Each batch is sent with COPY into a temporary table and moved with
	// one INSERT ... SELECT ... ON CONFLICT DO NOTHING: COPY alone cannot
	// skip the rows an interrupted run already committed.
	stage := `CREATE TEMP TABLE folio_copy_stage ON COMMIT DROP AS SELECT ` + list + ` FROM ` + id + ` WITH NO DATA`
	move := `INSERT INTO ` + id + ` (` + list + `) `
	if tc.resume {
		move += `OVERRIDING SYSTEM VALUE `
	}
	move += `SELECT ` + list + ` FROM folio_copy_stage ON CONFLICT DO NOTHING`
	insert := func(batch [][]any) error {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if tc.pg.triggers {
				if _, err := tx.Exec(ctx, `ALTER TABLE `+id+` DISABLE TRIGGER USER`); err != nil {
					return fmt.Errorf("disable its triggers (run the copy as the tables' owner, the role the replicas use): %w", err)
				}
			}
			if _, err := tx.Exec(ctx, stage); err != nil {
				return err
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"folio_copy_stage"}, cols, pgx.CopyFromRows(batch)); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, move)
			if err != nil {
				return err
			}
			t.Copied += tag.RowsAffected()
			if tc.pg.triggers {
				_, err = tx.Exec(ctx, `ALTER TABLE `+id+` ENABLE TRIGGER USER`)
			}
			return err
		})
		if err == nil && o.afterStep != nil {
			o.afterStep()
		}
		return err
	}
	raw := make([]any, n)
	ptrs := make([]any, n)
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	batch := make([][]any, 0, o.BatchRows)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		row := make([]any, n)
		for i, c := range tc.targets {
			v := raw[i]
			if b, ok := v.([]byte); ok && packedColumns[name][c.name] {
				unpacked, err := scan.UnpackJSON(b)
				if err != nil {
					return fmt.Errorf("%s.%s: %w", name, c.name, err)
				}
				v = []byte(unpacked)
			}
			v, err := convert(v, c.dataType)
			if err != nil {
				return fmt.Errorf("%s.%s: %w", name, c.name, err)
			}
			row[i] = v
		}
		batch = append(batch, row)
		if len(batch) == o.BatchRows {
			if err := insert(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(batch) > 0 {
		return insert(batch)
	}
	return nil
}

// convert turns a SQLite value into the Go value for a PostgreSQL column
// of type dataType (information_schema's name). The schemas mirror each
// other; only flags (0/1 to BOOLEAN) and blobs need a change of kind.
func convert(v any, dataType string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch dataType {
	case "boolean":
		switch x := v.(type) {
		case int64:
			return x != 0, nil
		case bool:
			return x, nil
		}
	case "smallint", "integer", "bigint":
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			if x == float64(int64(x)) {
				return int64(x), nil
			}
		case string:
			return strconv.ParseInt(x, 10, 64)
		}
	case "text", "character varying", "json", "jsonb":
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		}
	case "bytea":
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	case "double precision", "real", "numeric":
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		}
	default:
		return v, nil
	}
	return nil, fmt.Errorf("cannot store SQLite's %T %v as %s", v, v, dataType)
}

// quoteLite quotes a SQLite identifier.
func quoteLite(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
