package store

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"folio/app"
)

// TestJobVariablesPacked: long variables are stored packed (a BLOB a
// fraction of their size) and read back as the JSON sent, through every
// path that returns a job row: the lookup, a worker's start and a
// synchronous generate's record. Short ones and rows written before
// packing (text) read as they are; a damaged packed value is an error,
// never other variables.
func TestJobVariablesPacked(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	team := mustUser(t, db, "pack@example.com").PersonalTeamID
	long := json.RawMessage(`{"customer":"Ωμέγα Trading","items":[` + strings.Repeat(`{"description":"Template design: invoice, reminder","quantity":3,"unitPrice":240},`, 25) + `{"description":"last line","quantity":1}]}`)
	short := json.RawMessage(`{"number":"7"}`)
	now := time.Now().UTC().Truncate(time.Millisecond)
	job := func(id string, vars json.RawMessage) *app.Job {
		return &app.Job{ID: id, TeamID: team, TemplateID: "tpl_1", Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: now, Variables: vars}
	}
	if err := db.CreateJobs(ctx, nil, job("job_long", long), job("job_short", short), job("job_none", nil)); err != nil {
		t.Fatal(err)
	}
	r := app.JobResult{Status: app.StatusCompleted, FilePath: team + "/job_sync.pdf", FileSize: 9, CompletedAt: now, Output: []byte("%PDF-1.7\n")}
	if _, err := db.RecordJob(ctx, nil, job("job_sync", long), r, nil); err != nil {
		t.Fatal(err)
	}
	stored := func(id string) (kind string, size int) {
		t.Helper()
		if err := db.read.QueryRowContext(ctx, `SELECT typeof(variables), COALESCE(length(CAST(variables AS BLOB)), 0) FROM jobs WHERE id = ?`, id).Scan(&kind, &size); err != nil {
			t.Fatal(err)
		}
		return kind, size
	}
	for _, id := range []string{"job_long", "job_sync"} {
		if kind, size := stored(id); kind != "blob" || size > len(long)/3 {
			t.Errorf("%s: stored as %s of %d bytes, want a packed blob under a third of the %d JSON bytes", id, kind, size, len(long))
		}
	}
	if kind, size := stored("job_short"); kind != "text" || size != len(short) {
		t.Errorf("short variables stored as %s of %d bytes, want their text", kind, size)
	}
	// A row written before packing: its variables are text.
	if err := db.CreateJobs(ctx, nil, job("job_old", nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(ctx, `UPDATE jobs SET variables = ? WHERE id = 'job_old'`, string(long)); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]json.RawMessage{"job_long": long, "job_sync": long, "job_short": short, "job_none": nil, "job_old": long} {
		j, err := db.FindJobByID(ctx, team, id)
		if err != nil || !bytes.Equal(j.Variables, want) {
			t.Errorf("%s: variables %.60q (%v), want %.60q", id, j.Variables, err, want)
		}
	}
	started, ok, err := db.StartJob(ctx, "job_long", now)
	if err != nil || !ok || !bytes.Equal(started.Variables, long) {
		t.Fatalf("a worker's start read %.60q (%v %v), want the variables sent", started.Variables, ok, err)
	}
	// Damage: the packed block cut short.
	if _, err := db.write.ExecContext(ctx, `UPDATE jobs SET variables = substr(variables, 1, 40) WHERE id = 'job_sync'`); err != nil {
		t.Fatal(err)
	}
	if j, err := db.FindJobByID(ctx, team, "job_sync"); err == nil {
		t.Fatalf("damaged variables read as %.60q, want an error", j.Variables)
	}
}
