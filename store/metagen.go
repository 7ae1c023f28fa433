package store

import (
	"context"
	"database/sql"

	"folio/app"
)

var _ app.MetaGenerations = (*DB)(nil)

// MetadataGeneration reads the counter that migration 0016's triggers raise
// in every transaction changing keys, users, teams, members, templates,
// versions or shares (app.MetaCache). Every API request reads it once, so
// it runs without cancellation (shortRead).
//
// While the WAL-index header reads the same as when the generation was
// last read, nothing was committed since, by any connection or process,
// and the generation read then is returned without a statement (issue 24:
// the read was the largest part of a request's own CPU). The header is
// read before the statement, so the generation kept is at least as new
// as its header says.
func (db *DB) MetadataGeneration(ctx context.Context) (int64, error) {
	h, known := db.wal.header()
	if known {
		if seen := db.genSeen.Load(); seen != nil && seen.header == h {
			return seen.n, nil
		}
	}
	var n int64
	if err := db.read.QueryRowContext(shortRead(ctx), `SELECT n FROM meta_generation WHERE id = 1`).Scan(&n); err != nil {
		return 0, err
	}
	if known {
		db.genSeen.Store(&genSeen{header: h, n: n})
	}
	return n, nil
}

// The writer's own commits (issue 24, tenth session). Under a load of
// writes nearly every request found the header changed by the last
// commit and read the generation with a statement. Each of this process's
// write transactions that changed rows reads the generation just before its
// commit, with the WAL-index header as it was then (its write lock held since BEGIN
// IMMEDIATE, no other commit can come between), and publishes the pair
// after its commit when the header's change counter (iChange) rose by
// exactly one: that commit was its own, so the generation it read is the
// one the header now stands for. A commit by anyone else in between
// raises the counter further, and the next request reads the statement.

// testHookCommitted, when set (tests), runs right after a write
// transaction's COMMIT, before its generation is published.
var testHookCommitted func()

// genBefore is what a write transaction read before its commit.
type genBefore struct {
	header walIndexHeader
	n      int64
	ok     bool
}

// walChange is the index of iChange in walIndexHeader (byte offset 8).
const walChange = 2

// genStatement is the generation's statement in a write transaction, with
// the rows the connection has changed so far; its text differs from
// MetadataGeneration's so that tests can tell them apart.
const genStatement = `SELECT n AS generation, total_changes() FROM meta_generation WHERE id = 1`

// changesAtBegin is how many rows the writer's connection had changed when
// the transaction began (-1 when the WAL-index is not mapped).
func (db *DB) changesAtBegin(ctx context.Context, tx *Tx) int64 {
	if _, known := db.wal.header(); !known {
		return -1
	}
	var n int64
	if tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&n) != nil {
		return -1
	}
	return n
}

// generationBeforeCommit reads the generation in the writer's transaction.
// Only a transaction that changed rows is worth publishing: one that
// changed none writes no frame, so its COMMIT leaves iChange as it was,
// and another process's commit right after it would raise the counter by
// one (found by review). A change does not prove a frame either (an
// UPDATE to the same values writes none): generationCommitted also needs
// the commit frame written.
func (db *DB) generationBeforeCommit(ctx context.Context, tx *Tx, changesAtBegin int64) genBefore {
	h, known := db.wal.header()
	if !known || changesAtBegin < 0 {
		return genBefore{}
	}
	var g genBefore
	var changes int64
	if tx.QueryRowContext(ctx, genStatement).Scan(&g.n, &changes) != nil || changes == changesAtBegin {
		return genBefore{}
	}
	g.header, g.ok = h, true
	return g
}

// generationCommitted publishes g for MetadataGeneration once the commit
// after it is known to be the only one since: wrote says the COMMIT wrote
// its commit frame (the only commit frame this process wrote meanwhile),
// so it raised iChange itself. A transaction can change rows and write
// nothing (an UPDATE to the same values: found by the second review), so
// total_changes() alone did not prove it.
func (db *DB) generationCommitted(g genBefore, wrote bool) {
	if !g.ok || !wrote {
		return
	}
	h, known := db.wal.header()
	if known && h[walChange] == g.header[walChange]+1 {
		db.genSeen.Store(&genSeen{header: h, n: g.n})
	}
}

// genSeen is a generation read and the WAL-index header read just before.
type genSeen struct {
	header walIndexHeader
	n      int64
}

// watchWAL maps the WAL-index for MetadataGeneration, and opens the
// connection that keeps its file while the database is open: the last
// connection of a process to close removes the -shm file, and the next
// one creates a new one that a mapping of the old would never see change.
// The readers' pool may close all its connections (TrimIdle) and the
// writer's may replace its one; this connection is never used, so never
// closed before Close. Without it, or without the mapping, every
// generation is read.
func (db *DB) watchWAL(ctx context.Context, dsn string) {
	pinDB, err := sql.Open("sqlite", dsn)
	if err != nil {
		return
	}
	pin, err := pinDB.Conn(ctx)
	if err == nil {
		err = pin.PingContext(ctx)
	}
	if err != nil {
		pinDB.Close()
		return
	}
	w := mapWALIndex(db.Path + "-shm")
	if w == nil {
		pin.Close()
		pinDB.Close()
		return
	}
	db.shmPin, db.shmPinDB, db.wal = pin, pinDB, w
}

// unwatchWAL undoes watchWAL, at Close.
func (db *DB) unwatchWAL() {
	db.wal.close()
	if db.shmPin != nil {
		db.shmPin.Close()
		db.shmPinDB.Close()
	}
}

// shortRead is ctx for a read of a row or two by key, which ends in
// microseconds: without its cancellation. With a context that can end,
// database/sql watches the rows and the driver the statement, each with a
// goroutine of its own per statement (and the driver a progress handler),
// which such a read does not need.
func shortRead(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
