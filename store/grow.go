package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"folio/app"
	"folio/store/internal/scan"
)

// GrowOptions describes the data set Grow writes (docs/performance.md,
// Growth): one big team with most of the jobs beside many small teams.
type GrowOptions struct {
	Jobs  int       // job rows to write
	Teams int       // small teams beside the big one (default 1,000)
	Days  int       // days of history the jobs spread over (default 90)
	Now   time.Time // the end of the history (default: now)
	Seed  uint64    // the same seed writes the same rows, ids included
	// Progress, when set, is told how many jobs are written so far.
	Progress func(jobs int)
}

// GrowResult names what Grow wrote and how to act as the big team's owner.
type GrowResult struct {
	BigTeamID      string           `json:"bigTeamId"`
	OwnerEmail     string           `json:"ownerEmail"`
	Password       string           `json:"password"`
	APIKey         string           `json:"apiKey"` // the big team's first key, in plain text
	TemplateIDs    []string         `json:"templateIds"`
	BatchID        string           `json:"batchId"` // one of the big team's 100-document batches
	SubscriptionID string           `json:"subscriptionId"`
	JobID          string           `json:"jobId"` // one of the big team's recent jobs
	Counts         map[string]int64 `json:"counts"`
	Seconds        float64          `json:"seconds"`
}

// GrowPassword is every grown user's password.
const GrowPassword = "grow password"

// Shares of the grown data set.
const (
	growBigShare      = 0.9   // of the jobs, the big team's
	growBatchShare    = 0.3   // of the jobs, in batches
	growFailedShare   = 0.05  // of the jobs, failed
	growXLSXShare     = 0.15  // of the jobs, XLSX
	growDeliveryShare = 0.25  // of a subscribed team's jobs, with an event and a delivery
	growActivityShare = 0.002 // activity rows per job
	growCommitEvery   = 20000 // jobs per transaction
)

// Grow writes a synthetic history into db, which must hold no teams yet:
// users, teams (a big one on the scale plan and opts.Teams small ones),
// members, API keys, templates, webhook subscriptions, and opts.Jobs jobs
// spread over opts.Days days with their batches, events, deliveries,
// hourly statistics, monthly usage and activity. Rows go in through
// prepared statements in large transactions on the writer connection,
// which Grow holds throughout: nothing else may write meanwhile.
func Grow(ctx context.Context, db *DB, opts GrowOptions) (*GrowResult, error) {
	start := time.Now()
	if opts.Teams <= 0 {
		opts.Teams = 1000
	}
	if opts.Days <= 0 {
		opts.Days = 90
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	conn, err := db.write.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var teams int
	if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM teams`).Scan(&teams); err != nil {
		return nil, err
	}
	if teams > 0 {
		return nil, fmt.Errorf("grow: the database already holds %d teams; grow writes into a new data directory", teams)
	}
	// A lost build is built again: no fsync until the end.
	for _, p := range []string{`PRAGMA synchronous = OFF`, `PRAGMA cache_size = -262144`} {
		if _, err := conn.ExecContext(ctx, p); err != nil {
			return nil, err
		}
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA synchronous = NORMAL`)
	hash, err := bcrypt.GenerateFromPassword([]byte(GrowPassword), bcrypt.MinCost)
	if err != nil {
		return nil, err
	}
	g := &grower{opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)), conn: conn, hash: string(hash),
		counts: map[string]int64{}, stats: map[statKey]*statVal{}, usage: map[[2]string]int64{}}
	g.end = opts.Now.UTC().Add(-time.Minute).Truncate(time.Millisecond)
	g.begin = g.end.Add(-time.Duration(opts.Days) * 24 * time.Hour)
	if err := g.begin1(ctx); err != nil {
		return nil, err
	}
	defer g.rollback()
	if err := g.writeTeams(ctx); err != nil {
		return nil, err
	}
	if err := g.writeJobs(ctx); err != nil {
		return nil, err
	}
	if err := g.writeTotals(ctx); err != nil {
		return nil, err
	}
	if err := g.commit(); err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return nil, err
	}
	g.res.Counts = g.counts
	g.res.Seconds = time.Since(start).Seconds()
	return &g.res, nil
}

type grower struct {
	opts       GrowOptions
	rng        *rand.Rand
	conn       *sql.Conn
	tx         *sql.Tx
	stmts      map[string]*sql.Stmt
	hash       string
	begin, end time.Time
	big        *growTeam
	small      []*growTeam
	counts     map[string]int64
	stats      map[statKey]*statVal
	usage      map[[2]string]int64 // team, month -> documents
	res        GrowResult
}

type growTeam struct {
	id, plan, owner string
	members         []string
	keys            []string
	templates       []string
	sub             string // a subscription to document and batch events ("" none)
	batchMax        int
	retention       time.Duration
}

type statKey struct {
	team     string
	slot     int64
	template string
	status   string
	format   string
}

type statVal struct{ count, durSum, durCount int64 }

const growAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// id is app.NewID's shape from the seeded generator.
func (g *grower) id(prefix string, n int) string { return prefix + "_" + g.chars(n) }

// timeID is app.NewTimeID's shape, made at at, from the seeded generator:
// the rows the server writes at volume (jobs, batches, events, deliveries,
// activity) have time-ordered IDs, so grown indexes are shaped as a
// server's would be.
func (g *grower) timeID(prefix string, at time.Time) string {
	return prefix + "_" + app.IDTime(at) + g.chars(20-app.IDTimeChars)
}

// chars returns n random base62 characters.
func (g *grower) chars(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = growAlphabet[g.rng.IntN(len(growAlphabet))]
	}
	return string(b)
}

func (g *grower) begin1(ctx context.Context) error {
	tx, err := g.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	g.tx, g.stmts = tx, map[string]*sql.Stmt{}
	return nil
}

func (g *grower) commit() error {
	for _, s := range g.stmts {
		s.Close()
	}
	err := g.tx.Commit()
	g.tx = nil
	return err
}

func (g *grower) rollback() {
	if g.tx != nil {
		g.tx.Rollback()
	}
}

// exec runs an insert into table as a statement prepared once per transaction.
func (g *grower) exec(ctx context.Context, table, query string, args ...any) error {
	s, ok := g.stmts[query]
	if !ok {
		var err error
		if s, err = g.tx.PrepareContext(ctx, query); err != nil {
			return fmt.Errorf("grow %s: %w", table, err)
		}
		g.stmts[query] = s
	}
	if _, err := s.ExecContext(ctx, args...); err != nil {
		return fmt.Errorf("grow %s: %w", table, err)
	}
	g.counts[table]++
	return nil
}

// checkpoint commits every growCommitEvery jobs.
func (g *grower) checkpoint(ctx context.Context) error {
	if err := g.commit(); err != nil {
		return err
	}
	return g.begin1(ctx)
}

const growSchema = `{"sections":[{"id":"body","components":[{"type":"text","props":{"content":"Dear {{name}}, invoice {{number}}"}}]}]}`

const growVariables = `[{"name":"name","type":"string","required":true},{"name":"number","type":"string","required":true}]`

// writeTeams writes the users, teams, members, keys, templates and
// subscriptions.
func (g *grower) writeTeams(ctx context.Context) error {
	created := g.begin.Add(-24 * time.Hour)
	owner, err := g.user(ctx, "grow-owner@example.com", "Grow Owner", created)
	if err != nil {
		return err
	}
	g.res.OwnerEmail, g.res.Password = "grow-owner@example.com", GrowPassword
	g.big = &growTeam{id: g.id("team", 20), plan: "scale", owner: owner, batchMax: 100, retention: app.Plans["scale"].FileRetention}
	if err := g.team(ctx, g.big, "Big Team", false, 100_000_000, created); err != nil {
		return err
	}
	for i := range 5 {
		u, err := g.user(ctx, fmt.Sprintf("grow-member-%d@example.com", i), fmt.Sprintf("Member %d", i), created)
		if err != nil {
			return err
		}
		if err := g.member(ctx, g.big, u, app.RoleMember, created); err != nil {
			return err
		}
	}
	g.res.BigTeamID = g.big.id
	if err := g.keysAndTemplates(ctx, g.big, 3, 20, created); err != nil {
		return err
	}
	g.res.TemplateIDs = g.big.templates
	if err := g.subscribe(ctx, g.big, created); err != nil {
		return err
	}
	g.res.SubscriptionID = g.big.sub
	plans := []string{"free", "free", "free", "free", "free", "free", "starter", "starter", "growth", "scale"}
	for i := range g.opts.Teams {
		email := fmt.Sprintf("grow-%d@example.com", i)
		u, err := g.userOnly(ctx, email, fmt.Sprintf("User %d", i), created)
		if err != nil {
			return err
		}
		plan := plans[i%len(plans)]
		p := app.Plans[plan]
		t := &growTeam{id: u.team, plan: plan, owner: u.id, batchMax: p.BatchSize, retention: p.FileRetention}
		if err := g.team(ctx, t, fmt.Sprintf("Team %d", i), true, 0, created); err != nil {
			return err
		}
		if err := g.keysAndTemplates(ctx, t, 1, min(2, p.Templates), created); err != nil {
			return err
		}
		if i%10 == 0 {
			if err := g.subscribe(ctx, t, created); err != nil {
				return err
			}
		}
		g.small = append(g.small, t)
	}
	return nil
}

type growUser struct{ id, team string }

// user writes a user with an empty personal team.
func (g *grower) user(ctx context.Context, email, name string, at time.Time) (string, error) {
	u, err := g.userOnly(ctx, email, name, at)
	if err != nil {
		return "", err
	}
	t := &growTeam{id: u.team, plan: "free", owner: u.id}
	return u.id, g.team(ctx, t, name+"'s team", true, 0, at)
}

// userOnly writes a user whose personal team the caller writes.
func (g *grower) userOnly(ctx context.Context, email, name string, at time.Time) (growUser, error) {
	u := growUser{id: g.id("usr", 20), team: g.id("team", 20)}
	return u, g.exec(ctx, "users", `INSERT INTO users (`+scan.UserCols+`) VALUES (?, ?, ?, ?, '', 1, 0, '', ?, ?, ?)`,
		u.id, email, name, g.hash, u.team, ms(at), ms(at))
}

func (g *grower) team(ctx context.Context, t *growTeam, name string, personal bool, credits int64, at time.Time) error {
	if err := g.exec(ctx, "teams", `INSERT INTO teams (id, name, slug, is_personal, owner_id, plan, credits, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.id, name, strings.ToLower(t.id), boolInt(personal), t.owner, t.plan, credits, ms(at), ms(at)); err != nil {
		return err
	}
	return g.member(ctx, t, t.owner, app.RoleOwner, at)
}

func (g *grower) member(ctx context.Context, t *growTeam, user, role string, at time.Time) error {
	t.members = append(t.members, user)
	return g.exec(ctx, "members", `INSERT INTO members (team_id, user_id, role, joined_at) VALUES (?, ?, ?, ?)`, t.id, user, role, ms(at))
}

func (g *grower) keysAndTemplates(ctx context.Context, t *growTeam, keys, templates int, at time.Time) error {
	perms := mustJSON(app.KeyFlags{}.Permissions())
	for i := range keys {
		plain := app.KeyPrefix + g.chars(40)
		if t == g.big && i == 0 {
			g.res.APIKey = plain
		}
		id := g.id("key", 20)
		t.keys = append(t.keys, id)
		if err := g.exec(ctx, "api_keys", `INSERT INTO api_keys (`+scan.KeyCols+`) VALUES (?, ?, ?, 'secret', ?, ?, ?, 1, ?, NULL, 0, 0, '', ?, ?)`,
			id, t.id, fmt.Sprintf("key %d", i+1), plain[:len(app.KeyPrefix)+6]+"...", app.HashToken(plain), perms, t.owner, ms(at), ms(at)); err != nil {
			return err
		}
	}
	for i := range templates {
		id := g.id("tpl", 20)
		t.templates = append(t.templates, id)
		name := fmt.Sprintf("Invoice %d", i+1)
		if err := g.exec(ctx, "templates", `INSERT INTO templates (`+scan.TemplateInsertCols+`) VALUES (?, ?, ?, ?, ?, '', 'attachment', '["pdf","xlsx"]', ?, ?, '{}', '[]', '{}', NULL, 0, NULL, ?, ?, ?)`,
			id, t.id, "etpl_"+g.chars(12), app.Slugify(name), name, growSchema, growVariables, t.owner, ms(at), ms(at)); err != nil {
			return err
		}
		if err := g.activity(ctx, t, app.ActivityTemplateCreated, id, name, at); err != nil {
			return err
		}
	}
	return nil
}

func (g *grower) subscribe(ctx context.Context, t *growTeam, at time.Time) error {
	t.sub = g.id("whk", 20)
	return g.exec(ctx, "webhook_subscriptions", `INSERT INTO webhook_subscriptions (`+scan.SubscriptionCols+`) VALUES (?, ?, ?, ?, '', 1, ?, ?, ?)`,
		t.sub, t.id, "https://hooks.example.com/folio/"+t.id, mustJSON(app.EventNames), g.id("whsec", 32), ms(at), ms(at))
}

func (g *grower) activity(ctx context.Context, t *growTeam, typ, tplID, tplName string, at time.Time) error {
	user := t.members[g.rng.IntN(len(t.members))]
	return g.exec(ctx, "activity", `INSERT INTO activity (id, team_id, type, user_id, target_id, target_email, template_id, template_name, details, created_at)
		VALUES (?, ?, ?, ?, '', '', ?, ?, NULL, ?)`, g.timeID("act", at), t.id, typ, user, tplID, tplName, ms(at))
}

// writeJobs writes the jobs in creation order: single documents and
// batches, each of the big team with growBigShare, else of a random small
// team.
func (g *grower) writeJobs(ctx context.Context) error {
	n := g.opts.Jobs
	span := g.end.Sub(g.begin)
	// A batch of b documents is chosen with probability p per request so
	// that growBatchShare of the jobs are in batches (mean size 55).
	const meanBatch = 55.0
	p := growBatchShare / (meanBatch*(1-growBatchShare) + growBatchShare)
	written, sinceCommit := 0, 0
	for written < n {
		at := g.begin.Add(time.Duration(float64(span) * (float64(written) + g.rng.Float64()) / float64(n))).Truncate(time.Millisecond)
		t := g.big
		if len(g.small) > 0 && g.rng.Float64() >= growBigShare {
			t = g.small[g.rng.IntN(len(g.small))]
		}
		size := 1
		if g.rng.Float64() < p {
			size = min(10+g.rng.IntN(91), t.batchMax, n-written)
			if t == g.big && g.res.BatchID == "" && at.After(g.end.Add(-span/2)) {
				size = min(100, n-written) // the batch the benchmark reads
			}
		}
		if err := g.request(ctx, t, at, size); err != nil {
			return err
		}
		written += size
		sinceCommit += size
		if g.rng.Float64() < growActivityShare*float64(size) {
			i := g.rng.IntN(len(t.templates))
			if err := g.activity(ctx, t, app.ActivityTemplateUpdated, t.templates[i], fmt.Sprintf("Invoice %d", i+1), at); err != nil {
				return err
			}
		}
		if sinceCommit >= growCommitEvery {
			if err := g.checkpoint(ctx); err != nil {
				return err
			}
			sinceCommit = 0
			if g.opts.Progress != nil {
				g.opts.Progress(written)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// request writes one generate request: a single job, or a batch of size
// jobs with its batch row.
func (g *grower) request(ctx context.Context, t *growTeam, at time.Time, size int) error {
	tpl := t.templates[min(int(g.rng.ExpFloat64()*2), len(t.templates)-1)]
	format := "pdf"
	if g.rng.Float64() < growXLSXShare {
		format = "xlsx"
	}
	key, user := "", t.members[g.rng.IntN(len(t.members))]
	if g.rng.Float64() < 0.9 {
		key = t.keys[min(int(g.rng.ExpFloat64()), len(t.keys)-1)]
	}
	reqID := g.chars(16)
	batchID, priority := "", app.PrioritySingle
	if size > 1 {
		batchID, priority = g.timeID("bat", at), app.PriorityBatch
		if size > 50 {
			priority = app.PriorityLargeBatch
		}
		if t == g.big && size == 100 && g.res.BatchID == "" {
			g.res.BatchID = batchID
		}
	}
	subscribed := t.sub != "" && g.rng.Float64() < growDeliveryShare
	done, failed := at, 0
	for i := range size {
		end, ok, err := g.job(ctx, t, at, tpl, format, key, user, batchID, priority, reqID, i, subscribed && size == 1)
		if err != nil {
			return err
		}
		if end.After(done) {
			done = end
		}
		if !ok {
			failed++
		}
	}
	if size == 1 {
		return nil
	}
	status := app.StatusCompleted
	if failed == size {
		status = app.StatusFailed
	}
	if err := g.exec(ctx, "batches", `INSERT INTO batches (`+scan.BatchCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		batchID, t.id, tpl, format, status, size, size-failed, failed, ms(at), ms(done)); err != nil {
		return err
	}
	if !subscribed {
		return nil
	}
	typ := app.EventBatchCompleted
	if status == app.StatusFailed {
		typ = app.EventBatchFailed
	}
	return g.delivery(ctx, t, typ, done, reqID, fmt.Sprintf(`{"batchId":%q,"templateId":%q,"format":%q,"status":%q,"totalDocuments":%d,"completedDocuments":%d,"failedDocuments":%d}`,
		batchID, tpl, format, status, size, size-failed, failed))
}

// job writes one ended job and counts it; it reports when it ended and
// whether it completed.
func (g *grower) job(ctx context.Context, t *growTeam, at time.Time, tpl, format, key, user, batchID string, priority int, reqID string, i int,
	withEvent bool) (time.Time, bool, error) {
	id := g.timeID("job", at)
	if t == g.big {
		g.res.JobID = id // the last one stays
	}
	dur := int64(20 + g.rng.IntN(200) + int(g.rng.ExpFloat64()*80))
	started := at.Add(time.Duration(5+g.rng.IntN(50)+i*int(dur)/2) * time.Millisecond)
	completed := started.Add(time.Duration(dur) * time.Millisecond)
	status, errMsg, errCode, errInfo, charged, month := app.StatusCompleted, "", "", any(nil), "quota", at.UTC().Format("2006-01")
	filePath, size, expires := "", int64(0), any(nil)
	if g.rng.Float64() < growFailedShare {
		status, errMsg, errCode, charged = app.StatusFailed, "PDF page limit exceeded: 31 pages, at most 30", "ERR_LIMIT_001", ""
		errInfo = `{"actualPages":31,"maxPages":30}`
	} else {
		size = int64(20_000 + g.rng.IntN(40_000))
		exp := completed.Add(t.retention)
		expires = ms(exp)
		// Files of the last retention period are kept; a few older ones
		// wait for the janitor.
		if exp.After(g.end) || g.rng.Float64() < 0.01 {
			filePath = t.id + "/" + id + "." + format
		}
		g.usage[[2]string{t.id, month}]++
	}
	vars := fmt.Sprintf(`{"name":"Customer %d","number":"INV-%d","items":[{"description":"Consulting","quantity":%d,"price":%d.50}],"currency":"EUR"}`,
		g.rng.IntN(5000), g.rng.IntN(1_000_000), 1+g.rng.IntN(20), 10+g.rng.IntN(900))
	var meta any
	if g.rng.Float64() < 0.3 {
		meta = fmt.Sprintf(`{"orderId":"ORD-%d"}`, g.rng.IntN(1_000_000))
	}
	if err := g.exec(ctx, "jobs", `INSERT INTO jobs (`+scan.JobCols+`, charged, charge_month) VALUES (?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, NULL, ?, 0, '', '', ?, ?)`,
		id, t.id, tpl, batchID, status, format, meta, vars, priority, errMsg, errCode, errInfo, filePath, size, key, user,
		ms(at), ms(started), ms(completed), expires, dur, reqID, charged, month); err != nil {
		return time.Time{}, false, err
	}
	k := statKey{t.id, slotOf(at), tpl, status, format}
	s := g.stats[k]
	if s == nil {
		s = &statVal{}
		g.stats[k] = s
	}
	s.count++
	s.durSum += dur
	s.durCount++
	if withEvent {
		typ, data := app.EventDocumentGenerated, fmt.Sprintf(`{"jobId":%q,"templateId":%q,"format":%q,"status":"completed"}`, id, tpl, format)
		if status == app.StatusFailed {
			typ, data = app.EventDocumentFailed, fmt.Sprintf(`{"jobId":%q,"templateId":%q,"format":%q,"status":"failed","errorCode":%q}`, id, tpl, format, errCode)
		}
		if err := g.delivery(ctx, t, typ, completed, reqID, data); err != nil {
			return time.Time{}, false, err
		}
	}
	return completed, status == app.StatusCompleted, nil
}

// delivery writes a dispatched event (its payload dropped, as dispatch
// does) and its ended delivery.
func (g *grower) delivery(ctx context.Context, t *growTeam, typ string, at time.Time, reqID, data string) error {
	evt := g.timeID("evt", at)
	if err := g.exec(ctx, "events", `INSERT INTO events (id, team_id, type, payload, created_at, dispatched, request_id) VALUES (?, ?, ?, '', ?, 1, ?)`,
		evt, t.id, typ, ms(at), reqID); err != nil {
		return err
	}
	payload := fmt.Sprintf(`{"event":%q,"timestamp":%q,"data":%s}`, typ, at.UTC().Format(time.RFC3339Nano), data)
	status, code, attempts, errMsg := app.DeliverySuccess, 200, 1, ""
	if g.rng.Float64() < 0.03 {
		status, code, attempts, errMsg = app.DeliveryFailed, 500, 4, "HTTP 500"
	}
	attempted := at.Add(time.Duration(200+g.rng.IntN(800)) * time.Millisecond)
	return g.exec(ctx, "webhook_deliveries", `INSERT INTO webhook_deliveries (id, subscription_id, team_id, event_id, event, payload, status, attempts, max_attempts,
		status_code, response_time_ms, error, attempted_at, next_retry_at, created_at, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 4, ?, ?, ?, ?, NULL, ?, ?)`,
		g.timeID("dlv", at), t.sub, t.id, evt, typ, payload, status, attempts, code, 30+g.rng.IntN(300), errMsg, ms(attempted), ms(at), reqID)
}

// writeTotals writes the analytics counters and the monthly usage the
// jobs add up to.
func (g *grower) writeTotals(ctx context.Context) error {
	for k, v := range g.stats {
		if err := g.exec(ctx, "job_stats", `INSERT INTO job_stats (team_id, slot, template_id, status, format, count, duration_sum, duration_count)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, k.team, k.slot, k.template, k.status, k.format, v.count, v.durSum, v.durCount); err != nil {
			return err
		}
	}
	for _, q := range []string{
		`INSERT INTO job_stats_daily (team_id, day, template_id, status, format, count, duration_sum, duration_count)
		SELECT team_id, slot / 24, template_id, status, format, SUM(count), SUM(duration_sum), SUM(duration_count) FROM job_stats GROUP BY 1, 2, 3, 4, 5`,
		`INSERT INTO job_hours (team_id, slot, count) SELECT team_id, slot, SUM(count) FROM job_stats GROUP BY 1, 2`,
		// The roll-ups of 0019, complete: their backfill has nothing to do.
		`INSERT INTO job_team_hours (team_id, slot, status, format, count, duration_sum, duration_count)
		SELECT team_id, slot, status, format, SUM(count), SUM(duration_sum), SUM(duration_count) FROM job_stats GROUP BY 1, 2, 3, 4`,
		`INSERT INTO job_team_days (team_id, day, status, format, count, duration_sum, duration_count)
		SELECT team_id, slot / 24, status, format, SUM(count), SUM(duration_sum), SUM(duration_count) FROM job_stats GROUP BY 1, 2, 3, 4`,
		`INSERT INTO delivery_hours (team_id, slot, status, count) SELECT team_id, attempted_at / 3600000, status, COUNT(*) FROM webhook_deliveries
		WHERE attempted_at IS NOT NULL AND status IN ('success', 'failed') GROUP BY 1, 2, 3`,
		// And those of 0022.
		`INSERT INTO job_template_hours (team_id, slot, template_id, count, failed, duration_sum, duration_count)
		SELECT team_id, slot, template_id, SUM(count), SUM(CASE WHEN status = 'failed' THEN count ELSE 0 END), SUM(duration_sum), SUM(duration_count)
		FROM job_stats GROUP BY 1, 2, 3`,
		`INSERT INTO job_template_days (team_id, day, template_id, count, failed, duration_sum, duration_count)
		SELECT team_id, slot / 24, template_id, SUM(count), SUM(CASE WHEN status = 'failed' THEN count ELSE 0 END), SUM(duration_sum), SUM(duration_count)
		FROM job_stats GROUP BY 1, 2, 3`,
		`UPDATE rollup_backfill SET done = 1`,
	} {
		if _, err := g.tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	for k, n := range g.usage {
		if err := g.exec(ctx, "usage", `INSERT INTO usage (team_id, month, documents, credits_used) VALUES (?, ?, ?, 0)`, k[0], k[1], n); err != nil {
			return err
		}
	}
	return nil
}

// GrowResultFile is the file in the data directory that keeps Grow's
// result, for the growth benchmark.
const GrowResultFile = "grow.json"

// SaveGrowResult writes r to path, readable by its owner only (it holds
// a password and an API key).
func SaveGrowResult(path string, r *GrowResult) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	f, err := createPrivate(path)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	return errors.Join(err, f.Close())
}

// LoadGrowResult reads what SaveGrowResult wrote.
func LoadGrowResult(path string) (*GrowResult, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r GrowResult
	return &r, json.Unmarshal(b, &r)
}
