package transfer

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/internal/pgtest"
	"folio/internal/s3test"
	"folio/store"
	"folio/store/s3files"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// install is an embedded install: grown records, entries in the queue and
// the webhook schedule, the keys, and files, one of them larger than the
// bucket's part size (so it goes as a multipart upload).
type install struct {
	dir   string
	files map[string][]byte
	queue []*app.QueueEntry
	// sealed is the blob of the signing certificate cert_1.
	sealed []byte
	doc    []byte // job_doc's document, kept in a segment
	vars   string // job_doc's variables, packed in SQLite (scan.PackJSON)
}

const partSize = 5 << 20 // the smallest S3 allows; the URL's partSizeMB=5

func newInstall(t *testing.T) *install {
	t.Helper()
	ctx := context.Background()
	in := &install{dir: t.TempDir(), files: map[string][]byte{}}
	db, err := store.Open(ctx, filepath.Join(in.dir, "folio.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Grow(ctx, db, store.GrowOptions{Jobs: 400, Teams: 6, Days: 3, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	// A document the database keeps: its bytes are in docs/, its row says
	// where; PostgreSQL's row must hold the bytes.
	in.doc = make([]byte, 20000)
	rand.Read(in.doc)
	var team string
	if raw, err := sql.Open("sqlite", "file:"+filepath.Join(in.dir, "folio.db")); err != nil {
		t.Fatal(err)
	} else {
		err = raw.QueryRow(`SELECT id FROM teams ORDER BY id LIMIT 1`).Scan(&team)
		raw.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	exp := now.Add(time.Hour)
	in.vars = `{"items":[` + strings.Repeat(`{"description":"Template design","quantity":3,"unitPrice":240},`, 20) + `{}]}`
	if _, err := db.RecordJob(ctx, nil, &app.Job{ID: "job_doc", TeamID: team, TemplateID: "tpl_doc", Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: now,
		Variables: json.RawMessage(in.vars)},
		app.JobResult{Status: app.StatusCompleted, FilePath: team + "/job_doc.pdf", FileSize: int64(len(in.doc)), CompletedAt: now, ExpiresAt: &exp, Output: in.doc}, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// A blob column: a signing certificate's sealed key (BLOB to BYTEA).
	lite, err := sql.Open("sqlite", "file:"+filepath.Join(in.dir, "folio.db"))
	if err != nil {
		t.Fatal(err)
	}
	in.sealed = make([]byte, 300)
	rand.Read(in.sealed)
	if _, err := lite.Exec(`INSERT INTO signing_certificates (id, team_id, name, subject, common_name, issuer, serial, not_before, not_after,
		fingerprint, key_type, chain_size, sealed, created_by, created_at)
		SELECT 'cert_1', id, 'Main', 'CN=A', 'A', 'CN=CA', '01', 1, 2, 'ff', 'ecdsa', 1, ?, owner_id, 3 FROM teams ORDER BY id LIMIT 1`, in.sealed); err != nil {
		t.Fatal(err)
	}
	lite.Close()
	b, err := store.OpenBolt(filepath.Join(in.dir, "queue.db"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		in.queue = append(in.queue, &app.QueueEntry{JobID: fmt.Sprintf("job_q%d", i), Priority: i % 3})
	}
	if err := b.Enqueue(ctx, in.queue...); err != nil {
		t.Fatal(err)
	}
	due := time.Now().Add(time.Hour)
	if err := b.ScheduleAttempts(ctx,
		&app.ScheduleEntry{DeliveryID: "del_1", SubscriptionID: "sub_1", Attempt: 2, Due: due},
		&app.ScheduleEntry{DeliveryID: "del_2", SubscriptionID: "sub_1", Attempt: 1, Due: due.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	in.queue = b.QueuedEntries()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for _, k := range keyNames {
		if _, err := store.Secret(filepath.Join(in.dir, "keys", k+".key")); err != nil {
			t.Fatal(err)
		}
	}
	fs := &store.Files{Root: filepath.Join(in.dir, "files")}
	for i, size := range []int{0, 1, 70_000, partSize + 123_457, 3000} {
		name := fmt.Sprintf("team_%d/job_%d.pdf", i%2, i)
		if i == 4 {
			name = "assets/team_0/logo.png"
		}
		data := make([]byte, size)
		rand.Read(data)
		in.files[name] = data
		if _, err := fs.WriteFile(name, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

// target is an empty PostgreSQL database and S3 bucket.
type target struct {
	dbURL, filesURL string
}

func newTarget(t *testing.T) target {
	t.Helper()
	s3 := s3test.Shared(t)
	dbURL := pgtest.NewDatabase(t)
	return target{dbURL: dbURL, filesURL: s3.URL(s3.NewBucket(t), "folio") + "&partSizeMB=5"}
}

func (in *install) options(tg target) Options {
	return Options{Data: in.dir, DatabaseURL: tg.dbURL, FilesURL: tg.filesURL, Getenv: s3test.Getenv}
}

// complete fails the test unless the run ended complete.
func complete(t *testing.T, r *Report, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if r != nil {
		for _, p := range r.Problems {
			t.Errorf("problem: %s", p)
		}
	}
	t.Fatal(err)
}

// checkCopy reads the copy back with readers of its own: SQLite and
// PostgreSQL counts table by table, a few rows compared value for value,
// the queue in order, and the files' bytes through S3.
func checkCopy(t *testing.T, in *install, tg target, r *Report) {
	t.Helper()
	ctx := context.Background()
	lite, err := sql.Open("sqlite", "file:"+filepath.Join(in.dir, "folio.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg, err := pgx.Connect(ctx, tg.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	copied := 0
	for _, tb := range r.Tables {
		if tb.From != "sqlite" {
			continue
		}
		var want, got int64
		if err := lite.QueryRow(`SELECT count(*) FROM ` + quoteLite(tb.Name)).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if err := pg.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{tb.Name}.Sanitize()).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want != got {
			t.Errorf("%s: SQLite %d rows, PostgreSQL %d", tb.Name, want, got)
		}
		copied++
	}
	// Every SQLite table but its bookkeeping was copied.
	trows, err := lite.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	for trows.Next() {
		var name string
		trows.Scan(&name)
		if _, left := sqliteOnly[name]; !left && r.Table(name) == nil {
			t.Errorf("table %s was not copied", name)
		}
	}
	if copied < 30 {
		t.Errorf("only %d tables copied", copied)
	}
	// Rows value for value, flags and insertion order included.
	type user struct {
		id, email, hash string
		verified        bool
		created         int64
	}
	var lu []user
	rows, err := lite.Query(`SELECT id, email, password_hash, email_verified, created_at FROM users ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u user
		if err := rows.Scan(&u.id, &u.email, &u.hash, &u.verified, &u.created); err != nil {
			t.Fatal(err)
		}
		lu = append(lu, u)
	}
	prows, err := pg.Query(ctx, `SELECT id, email, password_hash, email_verified, created_at FROM users ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	var pu []user
	for prows.Next() {
		var u user
		if err := prows.Scan(&u.id, &u.email, &u.hash, &u.verified, &u.created); err != nil {
			t.Fatal(err)
		}
		pu = append(pu, u)
	}
	if fmt.Sprint(lu) != fmt.Sprint(pu) || len(lu) == 0 {
		t.Errorf("users differ:\nSQLite     %v\nPostgreSQL %v", lu, pu)
	}
	var lperm, pperm string
	lite.QueryRow(`SELECT permissions FROM api_keys ORDER BY id LIMIT 1`).Scan(&lperm)
	pg.QueryRow(ctx, `SELECT permissions FROM api_keys ORDER BY id LIMIT 1`).Scan(&pperm)
	if lperm == "" || lperm != pperm {
		t.Errorf("api key permissions: SQLite %q, PostgreSQL %q", lperm, pperm)
	}
	var sealed []byte
	if err := pg.QueryRow(ctx, `SELECT sealed FROM signing_certificates WHERE id = 'cert_1'`).Scan(&sealed); err != nil || !bytes.Equal(sealed, in.sealed) {
		t.Errorf("signing certificate's sealed key: %d bytes (%v), want the %d stored", len(sealed), err, len(in.sealed))
	}
	// The identity sequence continues after the copied rows.
	var next, maxSeq int64
	pg.QueryRow(ctx, `SELECT max(seq) FROM users`).Scan(&maxSeq)
	if err := pg.QueryRow(ctx, `INSERT INTO teams (id, name, slug, owner_id, created_at, updated_at) VALUES ('team_new', 'n', 'n', 'u', 0, 0) RETURNING seq`).Scan(&next); err != nil {
		t.Fatal(err)
	}
	var teamsMax int64
	pg.QueryRow(ctx, `SELECT max(seq) FROM teams WHERE id <> 'team_new'`).Scan(&teamsMax)
	if next <= teamsMax {
		t.Errorf("a new team got seq %d, not after the copied %d", next, teamsMax)
	}
	pg.Exec(ctx, `DELETE FROM teams WHERE id = 'team_new'`)

	// The queue: same entries, same keys, same order.
	var got []string
	qrows, err := pg.Query(ctx, `SELECT job_id, priority, seq FROM queue_entries ORDER BY priority, seq`)
	if err != nil {
		t.Fatal(err)
	}
	for qrows.Next() {
		var id string
		var prio, seq int64
		qrows.Scan(&id, &prio, &seq)
		got = append(got, fmt.Sprintf("%s/%d", id, prio))
	}
	var want []string
	for _, e := range in.queue {
		want = append(want, fmt.Sprintf("%s/%d", e.JobID, e.Priority))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("queue: got %v, want %v", got, want)
	}
	var attempts int
	pg.QueryRow(ctx, `SELECT count(*) FROM webhook_schedule WHERE subscription_id = 'sub_1'`).Scan(&attempts)
	if attempts != 2 {
		t.Errorf("webhook schedule: %d attempts, want 2", attempts)
	}

	// The keys, byte for byte.
	for _, k := range keyNames {
		want, err := os.ReadFile(filepath.Join(in.dir, "keys", k+".key"))
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		if err := pg.QueryRow(ctx, `SELECT value FROM secrets WHERE name = $1`, k).Scan(&got); err != nil || !bytes.Equal(got, want) {
			t.Errorf("key %s: %x (%v), want the file's %x", k, got, err, want)
		}
	}

	// The files, read back through S3.
	cfg, err := s3files.ParseURL(tg.filesURL, s3test.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	s3, err := s3files.Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range in.files {
		rc, _, err := s3.OpenFile(name)
		if err != nil {
			t.Errorf("file %s: %v", name, err)
			continue
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(b, data) {
			t.Errorf("file %s: %d bytes read back (%v), want the %d written", name, len(b), err, len(data))
		}
	}
	if r.Files.Count != len(in.files) || r.Files.Verified != len(in.files) {
		t.Errorf("files: %+v, want %d verified", r.Files, len(in.files))
	}
}

func TestMigrateInstall(t *testing.T) {
	in := newInstall(t)
	tg := newTarget(t)
	var log bytes.Buffer
	o := in.options(tg)
	o.Log = &log
	r, err := Run(context.Background(), o)
	complete(t, r, err)
	checkCopy(t, in, tg, r)
	pg, err := pgx.Connect(context.Background(), tg.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	var doc []byte
	var vars string
	err = pg.QueryRow(context.Background(), `SELECT data FROM job_files WHERE job_id = 'job_doc'`).Scan(&doc)
	if err == nil {
		err = pg.QueryRow(context.Background(), `SELECT variables FROM jobs WHERE id = 'job_doc'`).Scan(&vars)
	}
	pg.Close(context.Background())
	if err != nil || !bytes.Equal(doc, in.doc) {
		t.Fatalf("the document kept in a segment reached PostgreSQL as %d bytes (%v), want its %d", len(doc), err, len(in.doc))
	}
	if vars != in.vars {
		t.Fatalf("the packed variables reached PostgreSQL as %q, want the JSON text %q", vars, in.vars)
	}
	if r.Files.Copied != len(in.files) || r.Files.ReadBack != 0 {
		t.Errorf("files: %+v: want all %d copied and verified by their ETag", r.Files, len(in.files))
	}
	var out bytes.Buffer
	WriteReport(&out, r)
	t.Logf("%s\n%s", log.String(), out.String())

	// Again over the complete copy: it verifies and copies nothing.
	r2, err := Run(context.Background(), in.options(tg))
	complete(t, r2, err)
	for _, tb := range r2.Tables {
		if tb.Copied != 0 {
			t.Errorf("second run copied %d rows of %s", tb.Copied, tb.Name)
		}
	}
	if r2.Files.Copied != 0 || r2.Files.Verified != len(in.files) {
		t.Errorf("second run: files %+v, want none copied, all verified", r2.Files)
	}
	checkCopy(t, in, tg, r2)
}

// An interrupted copy goes on at the next run: nothing is copied twice
// and the verification passes.
func TestMigrateResumesAfterInterruption(t *testing.T) {
	in := newInstall(t)
	tg := newTarget(t)
	// Count the steps of a whole run first, on another target.
	o := in.options(newTarget(t))
	o.BatchRows = 25
	steps := 0
	o.afterStep = func() { steps++ }
	r, err := Run(context.Background(), o)
	complete(t, r, err)
	if steps < 10 {
		t.Fatalf("only %d steps in a run", steps)
	}
	var rowsTotal int64
	for _, tb := range r.Tables {
		rowsTotal += tb.Source
	}

	// Twice: each run stops a third of a whole run in (the second has
	// less to do, so it stops later in the copy).
	for _, stopAt := range []int{steps / 3, steps / 3} {
		ctx, cancel := context.WithCancel(context.Background())
		o := in.options(tg)
		o.BatchRows = 25
		n := 0
		o.afterStep = func() {
			if n++; n == stopAt {
				cancel()
			}
		}
		r, err := Run(ctx, o)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("run stopped after %d steps: %v, want context.Canceled", stopAt, err)
		}
		_ = r
	}
	o = in.options(tg)
	o.BatchRows = 25
	r, err = Run(context.Background(), o)
	complete(t, r, err)
	var copied int64
	for _, tb := range r.Tables {
		copied += tb.Copied
		if tb.Source != tb.Target {
			t.Errorf("%s: %d rows in the source, %d in the copy", tb.Name, tb.Source, tb.Target)
		}
	}
	if copied == 0 || copied >= rowsTotal {
		t.Errorf("the last run copied %d of %d rows: it should have gone on from where the interrupted ones stopped", copied, rowsTotal)
	}
	checkCopy(t, in, tg, r)
}

// A running server holds the bbolt file: the copy refuses to start.
// A key a replica made before the copy is not overwritten: the copy
// reports it and is not complete.
func TestMigrateKeepsAKeyTheDatabaseHas(t *testing.T) {
	in := newInstall(t)
	tg := newTarget(t)
	o := in.options(tg)
	o.FilesURL = ""
	r, err := Run(context.Background(), o) // creates the schema
	complete(t, r, err)
	pg, err := pgx.Connect(context.Background(), tg.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(context.Background())
	other := bytes.Repeat([]byte{7}, 32)
	if _, err := pg.Exec(context.Background(), `UPDATE secrets SET value = $1 WHERE name = 'signing'`, other); err != nil {
		t.Fatal(err)
	}
	r, err = Run(context.Background(), o)
	if !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "already holds a different signing key") {
		t.Fatalf("got %v, want the signing key reported", err)
	}
	var got []byte
	pg.QueryRow(context.Background(), `SELECT value FROM secrets WHERE name = 'signing'`).Scan(&got)
	if !bytes.Equal(got, other) {
		t.Errorf("the database's signing key was overwritten")
	}
	if !r.FilesSkipped {
		t.Errorf("files copied without --to-files-url")
	}
}

func TestMigrateRefusesARunningServer(t *testing.T) {
	in := newInstall(t)
	b, err := store.OpenBolt(filepath.Join(in.dir, "queue.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = Run(context.Background(), Options{Data: in.dir, DatabaseURL: "postgres://127.0.0.1:1/none"})
	if err == nil || !strings.Contains(err.Error(), "stop the server first") {
		t.Fatalf("got %v, want a refusal naming the running server", err)
	}
}
