package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

// TestBatchWithoutStates reads a batch made before migration 0017: no
// states, no batch_seq, yet its version rises with each change and its
// documents are read in request order.
func TestBatchWithoutStates(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "folio.db")
	old, err := open(ctx, path, "migrations/0016_meta_generation.sql")
	if err != nil {
		t.Fatal(err)
	}
	team := mustUser(t, old, "o@example.com").PersonalTeamID
	now := time.Now().UTC()
	if _, err := old.write.ExecContext(ctx, `INSERT INTO batches (`+scan.BatchCols+`) VALUES ('bat_o', ?, 'tpl_1', 'pdf', 'processing', 2, 0, 0, ?, NULL)`, team, ms(now)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"job_o1", "job_o2"} {
		if _, err := old.write.ExecContext(ctx, `INSERT INTO jobs (id, team_id, template_id, batch_id, status, format, priority, created_at) VALUES (?, ?, 'tpl_1', 'bat_o', 'pending', 'pdf', 5, ?)`, id, team, ms(now)); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b, err := db.FindBatchByID(ctx, team, "bat_o")
	if err != nil || b.States != "" || b.Version != 0 {
		t.Fatalf("migrated batch = %+v, %v", b, err)
	}
	if _, ok, err := db.StartJob(ctx, "job_o2", now); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if b, err = db.FindBatchByID(ctx, team, "bat_o"); err != nil || b.States != "" || b.Version != 1 {
		t.Fatalf("after a start = %+v, %v", b, err)
	}
	docs, err := db.FindBatchDocs(ctx, "bat_o", nil)
	if err != nil || len(docs) != 2 || docs[0].JobID != "job_o1" || docs[1].Status != app.StatusProcessing || docs[0].Seq != -1 {
		t.Fatalf("docs = %+v, %v", docs, err)
	}
}
