package transfer

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"folio/internal/pgtest"
	"folio/store"
)

// TestMeasureMigrate times folio admin migrate's copy of a grown install
// (docs/performance.md, Moving an install): FOLIO_MEASURE_MIGRATE=JOBS
// grows one with that many jobs (store.Grow, as folio admin grow) and
// copies its records into a fresh PostgreSQL database, then times a second
// run over the complete copy. Skipped unless set.
func TestMeasureMigrate(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("FOLIO_MEASURE_MIGRATE"))
	if n <= 0 {
		t.Skip("set FOLIO_MEASURE_MIGRATE=JOBS to measure")
	}
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "folio.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Grow(ctx, db, store.GrowOptions{Jobs: n, Teams: 100, Days: 30, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, _ := os.Stat(filepath.Join(dir, "folio.db"))
	o := Options{Data: dir, DatabaseURL: pgtest.NewDatabase(t)}
	for run := range 2 {
		t0 := time.Now()
		r, err := Run(ctx, o)
		complete(t, r, err)
		var rows, copied int64
		for _, tb := range r.Tables {
			rows, copied = rows+tb.Source, copied+tb.Copied
		}
		t.Logf("run %d: %d jobs, folio.db %d MB, %d rows in %d tables, %d copied, %.1f s", run+1, n, st.Size()>>20, rows, len(r.Tables), copied, time.Since(t0).Seconds())
	}
}
