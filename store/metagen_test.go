package store

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// watchedDB opens a database whose WAL-index is mapped and reads its
// generation once.
func watchedDB(t *testing.T) (*DB, int64) {
	t.Helper()
	db := mustDB(t)
	if db.wal == nil {
		t.Skip("the WAL-index is not mapped on this system")
	}
	n, err := db.MetadataGeneration(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return db, n
}

// The metadata generation is read with a statement once, then served from
// the last read while nothing is committed. This process's own commits
// that change rows publish the generation they committed (the writer reads
// it before each commit), so they cost requests no statement either,
// whether they change it or not; a commit that changes no row, and a
// commit by another process, make the next call read it.
func TestGenerationReadAgainOnlyAfterACommit(t *testing.T) {
	ctx := context.Background()
	db, n := watchedDB(t)
	// A commit that changes no row (DDL) is not published: the next call
	// reads the generation.
	if err := db.tx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE unrelated (x)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if seen := db.genSeen.Load(); seen != nil {
		if h, _ := db.wal.header(); seen.header == h {
			t.Fatal("a commit that changed no row published its generation")
		}
	}
	if got, err := db.MetadataGeneration(ctx); err != nil || got != n {
		t.Fatalf("generation %d, %v; want %d", got, err, n)
	}
	var mu sync.Mutex
	reads := 0 // MetadataGeneration's statements run (TraceQueries)
	stop := TraceQueries(func(q string, _ int) {
		if strings.Contains(q, "SELECT n FROM meta_generation") {
			mu.Lock()
			reads++
			mu.Unlock()
		}
	})
	defer stop()
	readsNow := func() int { mu.Lock(); defer mu.Unlock(); return reads }
	for range 50 {
		if got, err := db.MetadataGeneration(ctx); err != nil || got != n {
			t.Fatalf("generation %d, %v; want %d", got, err, n)
		}
	}
	if r := readsNow(); r != 0 {
		t.Fatalf("%d reads with nothing committed", r)
	}
	// A commit of this process that does not change the generation, and
	// one that does.
	for i, q := range []string{`INSERT INTO unrelated VALUES (1)`, `UPDATE meta_generation SET n = n + 1 WHERE id = 1`} {
		if err := db.tx(ctx, func(tx *Tx) error {
			_, err := tx.ExecContext(ctx, q)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if got, err := db.MetadataGeneration(ctx); err != nil || got != n+int64(i) || readsNow() != 0 {
			t.Fatalf("after %q: generation %d, %v, %d reads; want %d and none", q, got, err, readsNow(), n+int64(i))
		}
	}
	// Another process's commit.
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "FOLIO_TEST_BUMP_GENERATION="+db.Path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the other process: %v\n%s", err, out)
	}
	if got, err := db.MetadataGeneration(ctx); err != nil || got != n+2 || readsNow() != 1 {
		t.Fatalf("after another process's commit: generation %d, %v, %d reads; want %d and one", got, err, readsNow(), n+2)
	}
}

// A generation read before a commit is published only when that commit
// is the only one since the read: with a second commit between, the pair
// could stand for a generation the other commit changed.
func TestGenerationPublishedOnlyAfterOneCommit(t *testing.T) {
	ctx := context.Background()
	db, n := watchedDB(t)
	commit := func() {
		if err := db.tx(ctx, func(tx *Tx) error {
			_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS unrelated (x); INSERT INTO unrelated VALUES (1)`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, commits := range []int{2, 1} {
		h, _ := db.wal.header()
		stale := genBefore{header: h, n: n + 1000, ok: true}
		for range commits {
			commit()
		}
		db.generationCommitted(stale, true)
		got, err := db.MetadataGeneration(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[int]int64{2: n, 1: n + 1000}[commits]; got != want {
			t.Fatalf("%d commits after the read: generation %d, want %d", commits, got, want)
		}
	}
}

// A write by another process (folio admin) is seen at the next call,
// also after the idle trim closed the readers' connections.
func TestGenerationSeesAnotherProcess(t *testing.T) {
	ctx := context.Background()
	db, n := watchedDB(t)
	for i := range 2 {
		if err := db.TrimIdle(ctx); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), "FOLIO_TEST_BUMP_GENERATION="+db.Path)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the other process: %v\n%s", err, out)
		}
		if got, err := db.MetadataGeneration(ctx); err != nil || got != n+int64(i)+1 {
			t.Fatalf("after the other process's write %d: generation %d, %v; want %d", i+1, got, err, n+int64(i)+1)
		}
	}
}

// bumpGenerationChild is the other process of TestGenerationSeesAnotherProcess:
// it raises the generation of the database at path, as folio admin's
// writes do, with a connection of its own.
func bumpGenerationChild(path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(`UPDATE meta_generation SET n = n + 1 WHERE id = 1`)
	return err
}

// BenchmarkMetadataGeneration: one request's generation read with nothing
// committed since the last (the WAL-index header unchanged), and, for
// comparison, with the statement every time (the header unknown).
func BenchmarkMetadataGeneration(b *testing.B) {
	ctx := context.Background()
	db := mustDB(b)
	for _, mode := range []string{"unchanged", "read"} {
		b.Run(mode, func(b *testing.B) {
			w := db.wal
			if mode == "read" {
				db.wal = nil
				defer func() { db.wal = w }()
			}
			for b.Loop() {
				if _, err := db.MetadataGeneration(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A transaction that changes a row to the value it had writes no frame:
// its commit leaves iChange as it was. When another process commits right
// after it (here, in the moment between the COMMIT and the publication),
// iChange rises by exactly one, and the generation read before the COMMIT
// must not be published as the new header's: the next call reads the one
// the other process committed.
func TestGenerationNotPublishedWithoutAFrame(t *testing.T) {
	ctx := context.Background()
	db, n := watchedDB(t)
	h0, _ := db.wal.header()
	testHookCommitted = func() {
		testHookCommitted = nil
		if h, _ := db.wal.header(); h != h0 {
			t.Error("the commit wrote a frame; the test needs one that does not")
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), "FOLIO_TEST_BUMP_GENERATION="+db.Path)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("the other process: %v\n%s", err, out)
		}
	}
	defer func() { testHookCommitted = nil }()
	if err := db.tx(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE meta_generation SET n = n WHERE id = 1`)
		if err != nil {
			return err
		}
		if k, _ := res.RowsAffected(); k != 1 {
			t.Errorf("%d rows changed, want 1", k)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.MetadataGeneration(ctx); err != nil || got != n+1 {
		t.Fatalf("after another process's commit: generation %d, %v; want %d", got, err, n+1)
	}
}
