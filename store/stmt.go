package store

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// maxCachedStatements bounds the statement cache of a pool: queries are
// constant strings in this package, but a few are assembled (IN lists, sort
// orders), and those must not grow it without end.
const maxCachedStatements = 512

// pool is a *sql.DB whose queries run as prepared statements kept for the
// life of the pool. database/sql prepares every QueryContext anew, and
// SQLite's parser (compiled from C by modernc.org/sqlite) was the largest
// single cost of the generate path after system calls; a statement is now
// parsed once per connection (docs/performance.md).
type pool struct {
	*sql.DB

	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func newPool(db *sql.DB) *pool { return &pool{DB: db, stmts: map[string]*sql.Stmt{}} }

// stmt returns the cached statement for query, preparing it on first use;
// nil when the cache is full (the caller runs the query unprepared). The
// lock is not held while preparing: on the writer pool that waits for the
// connection, which a transaction looking up its statements may hold.
func (p *pool) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	p.mu.Lock()
	s, ok := p.stmts[query]
	full := len(p.stmts) >= maxCachedStatements
	p.mu.Unlock()
	if ok || full {
		return s, nil
	}
	s, err := p.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev, ok := p.stmts[query]; ok {
		s.Close() // prepared twice at once; keep the first
		return prev, nil
	}
	p.stmts[query] = s
	return s, nil
}

// QueryContext runs query as a cached prepared statement.
func (p *pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	trace(query, len(args))
	s, err := p.stmt(ctx, query)
	if err != nil || s == nil {
		return p.DB.QueryContext(ctx, query, args...)
	}
	return s.QueryContext(ctx, args...)
}

// QueryRowContext runs query as a cached prepared statement.
func (p *pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	trace(query, len(args))
	s, err := p.stmt(ctx, query)
	if err != nil || s == nil {
		return p.DB.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// ExecContext runs query as a cached prepared statement.
func (p *pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	trace(query, len(args))
	s, err := p.stmt(ctx, query)
	if err != nil || s == nil {
		return p.DB.ExecContext(ctx, query, args...)
	}
	return s.ExecContext(ctx, args...)
}

// traceQuery, when set, is told every statement run through a pool or a
// Tx, with its number of arguments (TraceQueries).
var traceQuery atomic.Pointer[func(query string, args int)]

func trace(query string, args int) {
	if fn := traceQuery.Load(); fn != nil {
		(*fn)(query, args)
	}
}

// Close closes the cached statements and the pool.
func (p *pool) Close() error {
	p.mu.Lock()
	for q, s := range p.stmts {
		s.Close()
		delete(p.stmts, q)
	}
	p.mu.Unlock()
	return p.DB.Close()
}

// Tx is a write transaction: the writer's, on its driver connection with
// statements prepared once for the connection's life (wconn.go).
type Tx struct {
	wc *writerConn
	// rows are the queries' rows not closed yet, closed before the
	// transaction ends (database/sql closed a Tx's rows at its end).
	rows []*txRows
	// counts are the ended jobs the running call noted (countJob), which
	// the writer adds to its group's when the call is kept.
	counts jobCounts
	// quota is what the charges written keep of a month's usage (CheckQuota).
	quota *quotaSeen
	// stepCtx, set by a maintenance step alone in its transaction, is the
	// context its statements stop with (stepDeadline); nil for others.
	stepCtx context.Context
	// stepEnd, set by a measured maintenance step, is called once its
	// transaction has committed or rolled back (endStep), so that what the
	// step's thread did is measured up to the writer's release.
	stepEnd func()
}

// endStep calls the step's stepEnd once, if any.
func (tx *Tx) endStep() {
	if f := tx.stepEnd; f != nil {
		tx.stepEnd = nil
		f()
	}
}

// bind is the context a statement of the transaction runs with: the
// step's (interruptible) when it is a maintenance step's, else ctx without
// its cancellation.
func (tx *Tx) bind(ctx context.Context) context.Context {
	if tx.stepCtx != nil {
		return tx.stepCtx
	}
	return uncancelled(ctx)
}

// QueryContext runs query within the transaction. The statements of a
// transaction ignore cancellation: SQLite rolls back the whole transaction
// when a write in it is interrupted, and a transaction carries the writes
// of several callers (DB.tx). A maintenance step's, alone in its
// transaction, stop at its deadline (bind).
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*txRows, error) {
	trace(query, len(args))
	rows, err := tx.wc.query(tx.bind(ctx), query, args)
	if err != nil {
		return nil, err
	}
	tx.rows = append(tx.rows, rows)
	return rows, nil
}

// QueryRowContext runs query within the transaction (see QueryContext)
// and reads its first row before it returns.
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *txRow {
	trace(query, len(args))
	return firstRow(tx.wc.query(tx.bind(ctx), query, args))
}

// ExecContext runs query within the transaction (see QueryContext).
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	trace(query, len(args))
	return tx.wc.exec(tx.bind(ctx), query, args)
}

// closeRows closes the rows a call left open, before its savepoint or
// the transaction ends.
func (tx *Tx) closeRows() {
	for _, r := range tx.rows {
		r.Close()
	}
	clear(tx.rows)
	tx.rows = tx.rows[:0]
}

// uncancelled is ctx without its cancellation: ctx itself when it has
// none (the writer's own statements, context.Background), which saves
// an allocation per statement.
func uncancelled(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}
