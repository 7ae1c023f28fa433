package store

import (
	"context"
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
