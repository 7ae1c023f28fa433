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

// writerCheckpointPages is the writer's wal_autocheckpoint (128 MB).
// Under a steady load of writes the reader's passive checkpoints never
// find the WAL wholly copied at the moment a write begins, so only the
// writer's own checkpoint starts it over, and that one waits for two
// fsyncs while every queued write waits for it (370 ms once on this
// machine's disk). At 16 MB a synchronous generate's ~100 KB of frames
// brought it about every 160 documents; at 128 MB it is eight times
// rarer (docs/performance.md, "fifth session, issue 24": sync/render-only
// on disk 43.7-47.8 % -> 48.0-49.8 %). A WAL that big is reached only
// under such a load: with pauses between writes the reader's checkpoints
// copy everything and the next write starts the file over.
const writerCheckpointPages = 32768

// checkpoint copies the committed WAL frames into the database file, as
// many as no reader still needs, on a reader connection. A failure only
// leaves them for the next one.
func (db *DB) checkpoint(ctx context.Context) WALState {
	var w WALState
	var busy int
	if err := db.read.DB.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &w.Frames, &w.Backfilled); err != nil {
		w.Err = err.Error()
	}
	w.Busy = busy != 0
	return w
}

// WALState is what a checkpoint found: the frames in the WAL, how many of
// them are copied into the database file (all of them, and the next write
// starts the WAL over), and whether another checkpoint was running.
type WALState struct {
	Frames, Backfilled int
	Busy               bool
	Err                string
}

// loopCheckpoint is the loop's checkpoint, passed over while a maintenance
// step runs: a checkpoint's two fsyncs and the pages it copies compete for
// the disk with the step's reads and writes, and a pass runs its own
// checkpoint after each step anyway. In the quiet 10M-job pass of the sixth
// session, steps that read nothing from the disk and used 4 ms of CPU
// still took 45–60 ms, waiting in the kernel while the loop's checkpoint
// synced (docs/performance.md, sixth session).
func (db *DB) loopCheckpoint() {
	if !db.stepping.TryLock() {
		return
	}
	defer db.stepping.Unlock()
	db.checkpoint(context.Background())
}

// restartFrames is how long a WAL a maintenance pass lets grow (16 MB)
// before it checkpoints until the WAL can start over (settle).
var restartFrames = 4096

// settle checkpoints on a reader until the WAL is wholly copied with no
// commit meanwhile, at most a few times, once it is longer than
// restartFrames; it reports what the last checkpoint found and whether
// the next write starts the WAL over. SQLite starts the WAL over only in
// a write whose transaction began with every frame copied, and under a
// steady flow of writes one usually commits while a checkpoint copies.
// The WAL then grew until the writer's own checkpoint (writerCheckpointPages),
// which fell in whatever write took it past the mark — during a 10M-job
// pass, a step's commit: 50–100 ms of copying and fsync (docs/performance.md,
// seventh session). Each checkpoint after the first copies only what came
// during the one before it, so it is short, and the chance that no write
// commits during it grows.
func (db *DB) settle(ctx context.Context) (WALState, bool) {
	for try := 0; ; try++ {
		c := db.commits.Load()
		w := db.checkpoint(ctx)
		if w.Err != "" || w.Busy || w.Backfilled < w.Frames {
			return w, false // a reader still needs frames, or another checkpoint runs
		}
		if db.commits.Load() == c {
			return w, true
		}
		if w.Frames < restartFrames || try == settleTries-1 {
			return w, false
		}
	}
}

// settleTries bounds settle's checkpoints.
const settleTries = 4

// restartWAL is settle's last resort, for a WAL past half the writer's
// mark: in the writer's turn, between two transactions, a passive
// checkpoint on the writer's connection copies the frames committed since
// the last checkpoint, so the next write starts the WAL over. It holds
// the writer for its two fsyncs (short when a reader's checkpoint copied
// nearly everything just before), and reports what it found and how long
// it held the writer.
func (db *DB) restartWAL(ctx context.Context) (WALState, time.Duration, error) {
	var w WALState
	var begun time.Time
	r := &writeReq{ctx: ctx, done: make(chan writeResult, 1), alone: true, raw: func() error {
		begun = time.Now()
		var busy int
		err := db.write.DB.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &w.Frames, &w.Backfilled)
		w.Busy = busy != 0
		return err
	}}
	if err := db.send(r); err != nil {
		return w, 0, err
	}
	return w, r.ended.Sub(begun), nil
}
