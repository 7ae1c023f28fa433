package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"
)

// writerConn runs the writer's transactions on the driver's connection
// directly (issue 24, eighth session): its statements — BEGIN IMMEDIATE,
// COMMIT, ROLLBACK, the savepoints and every query a call runs — are
// prepared once on modernc's connection and kept for the connection's
// life. Through database/sql each transaction cost a Tx (a context, a
// goroutine watching it, BEGIN parsed again) and each statement a
// Tx.StmtContext (~12 allocations and its dependency tracking); a group
// now costs a *sql.Conn taken from the writer pool and one Raw call.
//
// Only the writer goroutine uses it, inside (*sql.Conn).Raw, which holds
// the driver connection for it; the writer pool's other users
// (db.write.ExecContext) wait for the connection as they waited for the
// writer's sql.Tx.
type writerConn struct {
	ci    driver.Conn // the connection the statements are prepared on
	stmts map[string]driver.Stmt
	args  []driver.NamedValue // reused for each statement's arguments
	// inTx is set from a BEGIN until a COMMIT or ROLLBACK succeeds: when
	// one failed (a statement interrupted inside the transaction has
	// SQLite roll it back itself, and the ROLLBACK then finds none), the
	// next BEGIN is preceded by a ROLLBACK, so a connection left inside a
	// transaction is never written on as if it were not.
	inTx bool
}

// Statements of the writer's transaction control.
const (
	sqlBegin      = `BEGIN IMMEDIATE`
	sqlCommit     = `COMMIT`
	sqlRollback   = `ROLLBACK`
	sqlSavepoint  = `SAVEPOINT call`
	sqlRollbackTo = `ROLLBACK TO call`
	sqlRelease    = `RELEASE call`
)

// errNotPreparer: the driver cannot prepare with a context (modernc can).
var errNotPreparer = errors.New("store: the SQLite driver does not prepare statements with a context")

// use makes ci the connection the statements run on. A connection other
// than the last one (database/sql replaced a broken one) starts a new
// cache: the old statements went with their connection.
func (w *writerConn) use(ci any) error {
	c, ok := ci.(driver.Conn)
	if !ok {
		return fmt.Errorf("store: unexpected driver connection %T", ci)
	}
	if _, ok := c.(driver.ConnPrepareContext); !ok {
		return errNotPreparer
	}
	if w.ci != c {
		w.ci, w.stmts, w.inTx = c, map[string]driver.Stmt{}, false
	}
	return nil
}

// stmt returns query prepared on the connection, and whether it is kept
// (past maxCachedStatements the caller closes it after use).
func (w *writerConn) stmt(ctx context.Context, query string) (driver.Stmt, bool, error) {
	if s, ok := w.stmts[query]; ok {
		return s, true, nil
	}
	s, err := w.ci.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, false, err
	}
	if len(w.stmts) >= maxCachedStatements {
		return s, false, nil
	}
	w.stmts[query] = s
	return s, true, nil
}

// exec runs query with args on the connection.
func (w *writerConn) exec(ctx context.Context, query string, args []any) (driver.Result, error) {
	s, kept, err := w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if !kept {
		defer s.Close()
	}
	named, err := w.named(args)
	if err != nil {
		return nil, err
	}
	return s.(driver.StmtExecContext).ExecContext(ctx, named)
}

// query runs query with args and returns its rows; closing them resets
// the statement (and closes it when it is not kept).
func (w *writerConn) query(ctx context.Context, query string, args []any) (*txRows, error) {
	s, kept, err := w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	named, err := w.named(args)
	if err == nil {
		var dr driver.Rows
		if dr, err = s.(driver.StmtQueryContext).QueryContext(ctx, named); err == nil {
			r := &txRows{dr: dr, dest: make([]driver.Value, len(dr.Columns()))}
			if !kept {
				r.stmt = s
			}
			return r, nil
		}
	}
	if !kept {
		s.Close()
	}
	return nil, err
}

// control runs one of the transaction control statements and keeps inTx.
func (w *writerConn) control(query string) error {
	ctx := context.Background()
	if query == sqlBegin && w.inTx {
		_, _ = w.exec(ctx, sqlRollback, nil) // see inTx
		w.inTx = false
	}
	var err error
	if testHookControl != nil {
		err = testHookControl(query)
	}
	if err == nil {
		_, err = w.exec(ctx, query, nil)
	}
	switch {
	case err != nil:
	case query == sqlBegin:
		w.inTx = true
	case query == sqlCommit || query == sqlRollback:
		w.inTx = false
	}
	return err
}

// testHookControl, when set, is asked before each transaction control
// statement; an error stands for the statement's failure (it is not run).
var testHookControl func(query string) error

// close closes the kept statements (the writer's end, before the pool
// closes the connection: SQLite keeps a connection with statements open).
func (w *writerConn) close() {
	for q, s := range w.stmts {
		s.Close()
		delete(w.stmts, q)
	}
	w.ci = nil
}

// named converts args as database/sql does for a driver without a
// NamedValueChecker (driver.Valuer, then the default converter), into a
// buffer reused by the next statement: the driver binds them before it
// returns.
func (w *writerConn) named(args []any) ([]driver.NamedValue, error) {
	w.args = w.args[:0]
	for i, a := range args {
		nv := driver.NamedValue{Ordinal: i + 1}
		if na, ok := a.(sql.NamedArg); ok {
			nv.Name, a = na.Name, na.Value
		}
		switch v := a.(type) {
		case nil, int64, float64, bool, []byte, string, time.Time:
			nv.Value = v
		case int:
			nv.Value = int64(v)
		default:
			var err error
			if nv.Value, err = driver.DefaultParameterConverter.ConvertValue(a); err != nil {
				return nil, fmt.Errorf("sql: converting argument $%d type: %w", i+1, err)
			}
		}
		w.args = append(w.args, nv)
	}
	return w.args, nil
}

// txRows are a query's rows inside the writer's transaction, read like a
// *sql.Rows: Next, Scan, Err, Close.
type txRows struct {
	dr     driver.Rows
	stmt   driver.Stmt // closed with the rows: a statement not kept
	dest   []driver.Value
	err    error
	closed bool
}

// Next reads the next row; false at the end or on an error (Err).
func (r *txRows) Next() bool {
	if r.closed {
		return false
	}
	if err := r.dr.Next(r.dest); err != nil {
		if err != io.EOF {
			r.err = err
		}
		r.Close()
		return false
	}
	return true
}

// Scan copies the current row into dest as (*sql.Rows).Scan does.
func (r *txRows) Scan(dest ...any) error {
	if r.closed {
		return errors.New("sql: Rows are closed")
	}
	return scanValues(r.dr.Columns(), r.dest, dest)
}

// Err is the error that ended Next, if any.
func (r *txRows) Err() error { return r.err }

// Close resets the statement; closing twice is fine.
func (r *txRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.dr.Close()
	if r.stmt != nil {
		err = errors.Join(err, r.stmt.Close())
	}
	return err
}

// txRow is QueryRowContext's answer: the first row, read and its
// statement reset before the next statement runs, like a *sql.Row.
type txRow struct {
	cols []string
	vals []driver.Value
	err  error
}

// Scan copies the row into dest; sql.ErrNoRows when there was none.
func (r *txRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return scanValues(r.cols, r.vals, dest)
}

// Err is the query's error, as (*sql.Row).Err.
func (r *txRow) Err() error { return r.err }

// firstRow reads rows' first row and closes them.
func firstRow(rows *txRows, err error) *txRow {
	if err != nil {
		return &txRow{err: err}
	}
	defer rows.Close()
	if !rows.Next() {
		if rows.err != nil {
			return &txRow{err: rows.err}
		}
		return &txRow{err: sql.ErrNoRows}
	}
	// The values are the driver's until its next step: text and blobs are
	// copied when assigned, so the slice itself is all that must be kept.
	row := &txRow{cols: rows.dr.Columns(), vals: rows.dest}
	rows.dest = nil
	return row
}

// scanValues assigns a row's values to dest with database/sql's
// conversions.
func scanValues(cols []string, vals []driver.Value, dest []any) error {
	if len(dest) != len(vals) {
		return fmt.Errorf("sql: expected %d destination arguments in Scan, not %d", len(vals), len(dest))
	}
	for i, v := range vals {
		if err := assign(dest[i], v); err != nil {
			return fmt.Errorf("sql: Scan error on column index %d, name %q: %w", i, cols[i], err)
		}
	}
	return nil
}

// assign stores src in dest as database/sql's convertAssign does: for the
// usual destinations through sql.Null[T], whose Scan is convertAssign
// (so text, numbers and bytes convert the same way and bytes are
// copied), a sql.Scanner by its Scan, other named basic types by kind.
func assign(dest, src any) error {
	switch d := dest.(type) {
	case sql.Scanner:
		return d.Scan(src)
	case *string:
		return assignNull(d, src)
	case *int64:
		return assignNull(d, src)
	case *int:
		return assignNull(d, src)
	case *bool:
		return assignNull(d, src)
	case *float64:
		return assignNull(d, src)
	case *[]byte:
		return assignNull(d, src)
	case *any:
		return assignNull(d, src)
	case *time.Time:
		return assignNull(d, src)
	}
	return assignKind(dest, src)
}

// assignNull is convertAssign for *T, which refuses NULL but into a
// []byte or an any (nil).
func assignNull[T any](d *T, src any) error {
	var n sql.Null[T]
	if err := n.Scan(src); err != nil {
		return err
	}
	if !n.Valid {
		var zero T
		switch any(zero).(type) {
		case []byte, nil:
			*d = zero
			return nil
		}
		return fmt.Errorf("converting NULL to %s is unsupported", reflect.TypeFor[T]().Kind())
	}
	*d = n.V
	return nil
}

// assignKind handles pointers to named basic types (an app.JobStatus).
func assignKind(dest, src any) error {
	rv := reflect.ValueOf(dest)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("destination not a pointer")
	}
	ev := rv.Elem()
	switch ev.Kind() {
	case reflect.String:
		var s string
		if err := assignNull(&s, src); err != nil {
			return err
		}
		ev.SetString(s)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var n int64
		if err := assignNull(&n, src); err != nil {
			return err
		}
		if ev.OverflowInt(n) {
			return fmt.Errorf("converting driver.Value type %T (%v) to a %s: value out of range", src, src, ev.Kind())
		}
		ev.SetInt(n)
	case reflect.Float32, reflect.Float64:
		var f float64
		if err := assignNull(&f, src); err != nil {
			return err
		}
		ev.SetFloat(f)
	case reflect.Bool:
		var b bool
		if err := assignNull(&b, src); err != nil {
			return err
		}
		ev.SetBool(b)
	default:
		return fmt.Errorf("unsupported Scan, storing driver.Value type %T into type %T", src, dest)
	}
	return nil
}
