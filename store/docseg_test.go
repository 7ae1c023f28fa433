package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"folio/app"
)

// recordDoc records a completed synchronous job of team with doc.
func recordDoc(t *testing.T, db *DB, team, id string, doc []byte) {
	t.Helper()
	now := time.Now().UTC()
	exp := now.Add(time.Hour)
	j := &app.Job{ID: id, TeamID: team, TemplateID: "tpl_1", Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: now}
	r := app.JobResult{Status: app.StatusCompleted, FilePath: team + "/" + id + ".pdf", FileSize: int64(len(doc)), CompletedAt: now, ExpiresAt: &exp, Output: doc}
	if _, err := db.RecordJob(context.Background(), nil, j, r, nil); err != nil {
		t.Fatal(err)
	}
}

// segments lists the segment files of db.
func segments(t *testing.T, db *DB) []int64 {
	t.Helper()
	ids, err := segmentIDs(db.segs.dir)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func isGone(err error) bool {
	var ae *app.Error
	return errors.As(err, &ae) && ae.Code == app.ECodeFileGone
}

// TestDocumentInSegment: a document the database keeps is written once, to
// a segment beside it: its row holds no bytes, only where they are, and it
// reads back whole, after a restart too; appends after the restart go to a
// new segment.
func TestDocumentInSegment(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "folio.db")
	if err := copyMigrated(path); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	team := mustUser(t, db, "seg@example.com").PersonalTeamID
	docA := bytes.Repeat([]byte("%PDF-1.7 A "), 2000)
	docB := bytes.Repeat([]byte("%PDF-1.7 B "), 3000)
	recordDoc(t, db, team, "job_a", docA)
	recordDoc(t, db, team, "job_b", docB)
	var inRow int
	var seg int64
	if err := db.read.QueryRowContext(ctx, `SELECT length(data), seg FROM job_files WHERE job_id = 'job_b'`).Scan(&inRow, &seg); err != nil {
		t.Fatal(err)
	}
	if inRow != 0 || seg == 0 {
		t.Fatalf("job_b's row holds %d bytes, segment %d", inRow, seg)
	}
	st, err := os.Stat(filepath.Join(filepath.Dir(path), "docs", segmentName(seg)))
	if err != nil || st.Size() != int64(len(docA)+len(docB)) || st.Mode().Perm() != 0o600 {
		t.Fatalf("segment: %v, %v", st, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for id, want := range map[string][]byte{"job_a": docA, "job_b": docB} {
		if got, err := db.FindJobFile(ctx, id); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s after a restart: %d bytes, %v", id, len(got), err)
		}
	}
	recordDoc(t, db, team, "job_c", []byte("%PDF-1.7 C"))
	if ids := segments(t, db); len(ids) != 2 || ids[1] != seg+1 {
		t.Fatalf("segments after a restart's append: %v (the first was %d)", ids, seg)
	}
	if got, err := db.FindJobFile(ctx, "job_c"); err != nil || string(got) != "%PDF-1.7 C" {
		t.Fatalf("job_c: %q, %v", got, err)
	}
}

// TestDamagedSegmentIsGone: bytes that do not match their row's CRC (an OS
// crash wrote the row and not the document) or that the segment no longer
// holds read as a gone document, never as a damaged one.
func TestDamagedSegmentIsGone(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	team := mustUser(t, db, "damaged@example.com").PersonalTeamID
	recordDoc(t, db, team, "job_a", bytes.Repeat([]byte("a"), 5000))
	recordDoc(t, db, team, "job_b", bytes.Repeat([]byte("b"), 5000))
	seg := segments(t, db)[0]
	f, err := os.OpenFile(filepath.Join(db.segs.dir, segmentName(seg)), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0}, 100); err != nil { // inside job_a's document
		t.Fatal(err)
	}
	if _, err := db.FindJobFile(ctx, "job_a"); !isGone(err) {
		t.Fatalf("a changed byte: %v", err)
	}
	if got, err := db.FindJobFile(ctx, "job_b"); err != nil || len(got) != 5000 {
		t.Fatalf("the next document: %d bytes, %v", len(got), err)
	}
	if err := f.Truncate(7000); err != nil { // job_b's end is lost
		t.Fatal(err)
	}
	f.Close()
	if _, err := db.FindJobFile(ctx, "job_b"); !isGone(err) {
		t.Fatalf("a cut segment: %v", err)
	}
}

// TestSegmentsCollected: a segment no row names any more is removed, but
// never the one appended to, nor one with an append whose transaction has
// not ended; the documents of the others still read.
func TestSegmentsCollected(t *testing.T) {
	ctx := context.Background()
	old := segmentMax
	segmentMax = 100 // each document of these starts a segment
	defer func() { segmentMax = old }()
	db := mustDB(t)
	team := mustUser(t, db, "collect@example.com").PersonalTeamID
	for i := range 4 {
		recordDoc(t, db, team, fmt.Sprintf("job_%d", i), bytes.Repeat([]byte{byte('0' + i)}, 500))
	}
	ids := segments(t, db)
	if len(ids) != 4 {
		t.Fatalf("segments: %v", ids)
	}
	db.segs.mu.Lock()
	open := len(db.segs.files)
	db.segs.mu.Unlock()
	if open != 1 {
		t.Fatalf("%d segments open, want the one appended to (the others are synced and closed)", open)
	}
	if n, err := db.collectSegments(ctx); err != nil || n != 0 {
		t.Fatalf("collected %d with every document kept: %v", n, err)
	}
	// job_0's file expires; job_1 is deleted with its job; job_3 is in the
	// segment appended to.
	if err := db.ClearFile(ctx, "job_0"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(ctx, `DELETE FROM jobs WHERE id = 'job_1'`); err != nil {
		t.Fatal(err)
	}
	if err := db.ClearFile(ctx, "job_3"); err != nil {
		t.Fatal(err)
	}
	// An append whose transaction has not ended, in a segment of its own.
	ref, done, err := db.keepDoc(app.StatusCompleted, bytes.Repeat([]byte("x"), 500))
	if err != nil {
		t.Fatal(err)
	}
	recordDoc(t, db, team, "job_4", bytes.Repeat([]byte("4"), 500)) // the active segment is now job_4's
	if n, err := db.collectSegments(ctx); err != nil || n != 3 {
		t.Fatalf("collected %d, want job_0's, job_1's and job_3's: %v", n, err)
	}
	left := segments(t, db)
	want := []int64{ids[2], ref.seg, ref.seg + 1}
	if fmt.Sprint(left) != fmt.Sprint(want) {
		t.Fatalf("segments left %v, want %v (job_2's, the pending append's, the active one)", left, want)
	}
	if got, err := db.FindJobFile(ctx, "job_2"); err != nil || !bytes.Equal(got, bytes.Repeat([]byte("2"), 500)) {
		t.Fatalf("job_2 after the collection: %d bytes, %v", len(got), err)
	}
	done() // its transaction rolled back: no row names it
	if n, err := db.collectSegments(ctx); err != nil || n != 1 {
		t.Fatalf("collected %d after the append ended: %v", n, err)
	}
	if got, err := db.FindJobFile(ctx, "job_4"); err != nil || len(got) != 500 {
		t.Fatalf("job_4: %d bytes, %v", len(got), err)
	}
}

// TestSegmentsSyncedBeforeTheWAL: a checkpoint syncs the WAL only after
// the segments appended to since the last one (walSync), so a commit that
// a checkpoint makes durable names bytes already on the disk: a segment
// that cannot be synced fails the checkpoint, which copies nothing.
func TestSegmentsSyncedBeforeTheWAL(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	team := mustUser(t, db, "sync@example.com").PersonalTeamID
	db.stepping.Lock() // the loop's checkpoints pass over
	defer db.stepping.Unlock()
	// The first write after a checkpoint starts the WAL over and syncs its
	// header, and the segments with it; the second leaves them unsynced.
	recordDoc(t, db, team, "job_0", []byte("%PDF-1.7 first"))
	recordDoc(t, db, team, "job_a", []byte("%PDF-1.7 synced"))
	if !db.segs.dirty.Load() {
		t.Fatal("an append left nothing to sync")
	}
	seg := segments(t, db)[0]
	pr, broken, err := os.Pipe() // a pipe cannot be synced: EINVAL
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer broken.Close()
	db.segs.mu.Lock()
	real := db.segs.files[seg]
	db.segs.files[seg] = broken
	db.segs.mu.Unlock()
	if w := db.checkpoint(ctx); w.Err == "" || w.Backfilled != 0 {
		t.Fatalf("checkpoint with a segment that cannot be synced: %+v", w)
	}
	db.segs.mu.Lock()
	db.segs.files[seg] = real
	db.segs.mu.Unlock()
	if w := db.checkpoint(ctx); w.Err != "" || w.Frames == 0 || w.Backfilled != w.Frames {
		t.Fatalf("checkpoint: %+v", w)
	}
	if db.segs.dirty.Load() || len(db.segs.unsynced) != 0 {
		t.Fatal("a checkpoint left the segments unsynced")
	}
}

// TestSegmentsConcurrent: documents recorded from 8 goroutines while
// segments rotate every few documents, checkpoints sync them and the
// collector runs all read back whole; once their files are cleared, every
// segment but the active one goes, and no file stays open but the active
// one. (Run with -race in CI.)
func TestSegmentsConcurrent(t *testing.T) {
	ctx := context.Background()
	old := segmentMax
	segmentMax = 3000
	defer func() { segmentMax = old }()
	db := mustDB(t)
	team := mustUser(t, db, "concurrent@example.com").PersonalTeamID
	doc := func(i int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("%04d", i)), 175) }
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			db.checkpoint(ctx)
			if _, err := db.collectSegments(ctx); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				n := g*100 + i
				recordDoc(t, db, team, fmt.Sprintf("job_%d", n), doc(n))
			}
		}()
	}
	wg.Wait()
	close(stop)
	bg.Wait()
	for g := range 8 {
		for i := range 25 {
			n := g*100 + i
			if got, err := db.FindJobFile(ctx, fmt.Sprintf("job_%d", n)); err != nil || !bytes.Equal(got, doc(n)) {
				t.Fatalf("job_%d: %d bytes, %v", n, len(got), err)
			}
			if err := db.ClearFile(ctx, fmt.Sprintf("job_%d", n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := db.collectSegments(ctx); err != nil {
		t.Fatal(err)
	}
	if ids := segments(t, db); len(ids) != 1 || ids[0] != db.segs.activeID() {
		t.Fatalf("segments left: %v, want the active one (%d)", ids, db.segs.activeID())
	}
	db.segs.mu.Lock()
	open := len(db.segs.files)
	db.segs.mu.Unlock()
	if open != 1 {
		t.Fatalf("%d segments open, want 1", open)
	}
}

// activeID is the segment appended to.
func (s *docSegments) activeID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}
