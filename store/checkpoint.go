package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Checkpoints (issue 19). SQLite copies the WAL back into the database
// file, with two fsyncs, in the connection whose commit takes the WAL past
// wal_autocheckpoint pages (1,000 by default): the writer. One write
// transaction in a few then also paid for the copy, a maintenance step
// deleting a few hundred jobs most of all (20 ms became 70).
//
// A loop (DB.every) runs passive checkpoints on a reader connection instead,
// every checkpointEvery, and a maintenance pass runs one after each of its
// steps: they copy what is committed without taking the write lock, so
// writes go on meanwhile. The writer keeps a checkpoint of its own for a WAL past
// writerCheckpointPages: by then nearly every frame is copied already, so
// it costs little, and only a checkpoint in the writer lets the next write
// start the WAL over from its beginning (a passive one cannot while
// writes keep coming), which keeps the file from growing without end.

// checkpointEvery is how often the loop checkpoints unasked.
const checkpointEvery = 200 * time.Millisecond

// writerCheckpointPages is the writer's wal_autocheckpoint (16 MB).
const writerCheckpointPages = 4096

// checkpoint copies the committed WAL frames into the database file, as
// many as no reader still needs, on a reader connection. A failure only
// leaves them for the next one.
func (db *DB) checkpoint(ctx context.Context) {
	_, _ = db.read.DB.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
}

// ReleaseMemory asks SQLite to free the page cache of every idle
// connection (PRAGMA shrink_memory): each keeps up to 2 MB of pages after
// a load (the idle trim's hook, app/idletrim.go). The next reads fill the
// caches again from the OS's file cache.
func (db *DB) ReleaseMemory(ctx context.Context) error {
	var errs []error
	for _, p := range []*pool{db.read, db.write} {
		n := p.Stats().Idle
		conns := make([]*sql.Conn, 0, n)
		for range n { // hold them all, so each idle connection is visited once
			c, err := p.Conn(ctx)
			if err != nil {
				errs = append(errs, err)
				break
			}
			conns = append(conns, c)
		}
		for _, c := range conns {
			if _, err := c.ExecContext(ctx, `PRAGMA shrink_memory`); err != nil {
				errs = append(errs, err)
			}
			c.Close()
		}
	}
	return errors.Join(errs...)
}
