// Command folio is a self-hosted document generation service: one binary
// serving an HTTPS JSON API that renders PDF and XLSX documents from stored
// templates. This file only wires the parts together.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/trace"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	_ "time/tzdata" // profile time zones are checked against the IANA database, also in a static binary

	"folio/app"
	"folio/assets"
	"folio/render"
	"folio/render/pades"
	"folio/store"
	"folio/store/postgres"
	"folio/store/transfer"
	"folio/web"
	"folio/web/client"
	"folio/web/dashboard"
)

// Set by -ldflags "-X main.version=... -X main.commit=... -X main.date=...".
var (
	version = "dev"
	commit  = "none"
	date    = "unknown"
)

func main() {
	// No heap profile sampling unless asked for (GODEBUG=memprofilerate=N):
	// its buckets held 3–4 MB of an idle server's RSS after a load, and
	// sampling costs every allocation a check (docs/decisions.md, "CPU per
	// document and memory after a load, issue 24"). /debug/pprof/heap
	// answers an empty profile then.
	if !strings.Contains(os.Getenv("GODEBUG"), "memprofilerate") {
		runtime.MemProfileRate = 0
	}
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches the subcommand and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = serve(ctx, args, stderr)
	case "admin":
		err = admin(ctx, args, stdout, stderr)
	case "bench":
		err = bench(ctx, args, stdout, stderr)
	case "soak":
		err = soak(ctx, args, stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "folio %s (commit %s, built %s, %s)\n", version, commit, date, runtime.Version())
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, "usage: folio [serve|admin|bench|version] [flags]   (folio <command> -h for flags)")
		fmt.Fprintln(stdout, "fonts: folio serve --font-dir DIR (repeatable) offers the TTF/OTF/TTC fonts in DIR to every team's fontFamily;")
		fmt.Fprintln(stdout, "       --system-fonts the system's too; a team uploads its own as font assets (docs/templates.md, Fonts)")
	default:
		err = fmt.Errorf("unknown command %q (serve, admin, bench, version)", cmd)
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "folio:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	return 0
}

// exitError ends the process with its own exit status instead of 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// Operations defaults (docs/deploy.md).
const (
	janitorEvery         = 10 * time.Minute // retention passes
	defaultShutdownGrace = 30 * time.Second
	defaultMinFreeMB     = 100
)

// Config is the serve configuration (DESIGN.md section 2).
type Config struct {
	Addr, Data, BaseURL, TLSCert, TLSKey string
	Workers                              int
	DefaultPlan, Signup, SMTPURL         string
	WebhookRetrySchedule, WebhookCA      string
	WebhookAllowPrivate                  bool
	WebhookWorkers                       int
	ImageURLCA                           string // extra CA for image URLs
	ImageURLAllowPrivate                 bool   // image URLs may reach private addresses (tests, private installs)
	ImageURLTimeout                      time.Duration
	RateLimits, LogFormat                string
	ReadHeaderTimeout, ReadTimeout       time.Duration

	// DatabaseURL selects PostgreSQL instead of the embedded SQLite and
	// bbolt (docs/deploy.md, PostgreSQL); "": embedded.
	DatabaseURL string

	// Operations (docs/deploy.md).
	ShutdownGrace  time.Duration // 0: 30 s
	MetricsToken   string        // "": /metrics and /debug/pprof for loopback clients only
	TrustedProxies string        // addresses/CIDRs whose X-Forwarded-For names the client
	MinFreeMB      int64         // readiness needs this much free disk in --data
	GenerateWait   time.Duration // how long a synchronous generate waits (0: 30 s)

	// Lease is how long a replica's claim on a job or webhook attempt
	// lasts between renewals: when a replica dies, the others take its
	// work over once it lapses (0: app.DefaultJobLease for jobs,
	// app.DefaultAttemptLease for attempts).
	Lease time.Duration

	// FilesURL keeps generated documents, assets and avatars in S3
	// (s3://bucket/prefix?endpoint=...); "" keeps them in <data>/files.
	FilesURL string

	// Fonts (docs/templates.md, Fonts): operators' font directories, and
	// whether the system's font directories are scanned too.
	FontDirs    fontDirs
	SystemFonts bool

	// TSAURL is an RFC 3161 time-stamp authority: every signature gets a
	// time-stamp (PAdES B-T); "" signs B-B.
	TSAURL string

	// Limits overrides the generation limits of renders (zero fields keep
	// the specification's); nil keeps them all. No flag: embedders and tests.
	Limits *render.Limits
	// NoJanitor leaves retention to calls of Main.Sweep (the growth
	// benchmark times reads before it deletes anything). No flag.
	NoJanitor bool
	// InlineMax is the largest document kept in the database instead of
	// a file (0: app.DefaultInlineMax, 64 KB; negative: every document
	// is a file).
	InlineMax int
}

// flags defines the serve flags on fs, with FOLIO_<NAME> environment
// variables as defaults.
func (c *Config) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8443", "HTTPS listen address")
	fs.StringVar(&c.Data, "data", "./folio-data", "data directory")
	fs.StringVar(&c.BaseURL, "base-url", "", "public base URL used in links (default https://<addr>)")
	fs.StringVar(&c.TLSCert, "tls-cert", "", "PEM certificate file (default: self-signed in <data>/tls)")
	fs.StringVar(&c.TLSKey, "tls-key", "", "PEM key file")
	fs.IntVar(&c.Workers, "workers", runtime.NumCPU(), "document workers")
	fs.StringVar(&c.DefaultPlan, "default-plan", app.PlanUnlimited, "plan of a new team: "+app.PlanNames+" (unlimited: no quotas, for self-hosting; free for a public service)")
	fs.StringVar(&c.Signup, "signup", "open", "open or closed (closed: only folio admin create-user)")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "postgres://... to keep records and the job queue in PostgreSQL for several replicas (in progress: docs/deploy.md); default: SQLite and bbolt in --data")
	fs.StringVar(&c.SMTPURL, "smtp-url", "", "smtp://user:pass@host:port (default: mail written to <data>/mail)")
	fs.StringVar(&c.WebhookRetrySchedule, "webhook-retry-schedule", "0s,1m,5m,30m", "delays of webhook attempts")
	fs.BoolVar(&c.WebhookAllowPrivate, "webhook-allow-private", false, "allow webhook URLs on loopback/private addresses")
	fs.StringVar(&c.WebhookCA, "webhook-ca", "", "extra PEM CA bundle trusted for webhook TLS")
	fs.BoolVar(&c.ImageURLAllowPrivate, "image-url-allow-private", false, "allow image URLs on loopback/private addresses")
	fs.StringVar(&c.ImageURLCA, "image-url-ca", "", "extra PEM CA bundle trusted for image URLs")
	fs.DurationVar(&c.ImageURLTimeout, "image-url-timeout", app.DefaultImageFetchTimeout, "time one image URL may take to answer completely")
	fs.IntVar(&c.WebhookWorkers, "webhook-workers", app.DefaultWebhookWorkers, "webhook attempts in flight at once (at most 4 per subscription)")
	fs.StringVar(&c.RateLimits, "rate-limits", "", "JSON file replacing the rate-limit table, or off")
	fs.StringVar(&c.LogFormat, "log-format", "text", "text or json")
	fs.DurationVar(&c.ReadHeaderTimeout, "read-header-timeout", 10*time.Second, "time a client has to send its request headers")
	fs.DurationVar(&c.ReadTimeout, "read-timeout", 60*time.Second, "time a client has to send a whole request")
	fs.DurationVar(&c.ShutdownGrace, "shutdown-grace", defaultShutdownGrace, "on SIGTERM/SIGINT, time in-flight requests and running jobs get to finish")
	fs.StringVar(&c.MetricsToken, "metrics-token", "", "Bearer token for /metrics and /debug/pprof (default: loopback clients only)")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", "", "comma-separated addresses or CIDR ranges of reverse proxies whose X-Forwarded-For names the client")
	fs.Int64Var(&c.MinFreeMB, "min-free-mb", defaultMinFreeMB, "/readyz fails when the data directory's disk has less free space (MB)")
	fs.IntVar(&c.InlineMax, "inline-max", 0, "largest document (bytes) kept in the database instead of a file in --data or --files-url (0: 64 KB; -1: every document is a file)")
	fs.DurationVar(&c.Lease, "lease", 0, "how long a claim on a job or webhook attempt lasts between renewals; with several replicas, how soon the others take over a dead one's work (default 3m for jobs, 2m for attempts; at least 2s)")
	fs.StringVar(&c.FilesURL, "files-url", "", "s3://bucket/prefix?endpoint=host:port&region=... keeps documents, assets and avatars in S3 (credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; docs/deploy.md)")
	fs.Var(&c.FontDirs, "font-dir", "directory of TTF/OTF/TTC fonts every team may choose with fontFamily (repeatable; FOLIO_FONT_DIR: a "+string(os.PathListSeparator)+"-separated list)")
	fs.BoolVar(&c.SystemFonts, "system-fonts", false, "also offer the system's fonts ("+strings.Join(app.SystemFontDirs(), ", ")+")")
	fs.StringVar(&c.TSAURL, "tsa-url", "", "RFC 3161 time-stamp authority (http:// or https://) that stamps every document signature (PAdES B-T; default: B-B, no time-stamp)")
	envDefaults(fs)
	c.FontDirs.env = len(c.FontDirs.list) > 0
}

// fontDirs is the repeatable --font-dir flag; each value may be a list
// separated by the OS's path list separator (as FOLIO_FONT_DIR is). Dirs
// given on the command line replace those of the environment, as other
// flags' values do.
type fontDirs struct {
	list []string
	env  bool // list came from FOLIO_FONT_DIR
}

func (d *fontDirs) String() string { return strings.Join(d.list, string(os.PathListSeparator)) }

func (d *fontDirs) Set(v string) error {
	if d.env {
		d.list, d.env = nil, false
	}
	for _, p := range filepath.SplitList(v) {
		if p = strings.TrimSpace(p); p != "" {
			d.list = append(d.list, p)
		}
	}
	return nil
}

// envDefaults sets each flag from FOLIO_<NAME> when that variable is set.
func envDefaults(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := os.LookupEnv("FOLIO_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))); ok {
			if err := f.Value.Set(v); err == nil {
				f.DefValue = v
			}
		}
	})
}

func (c *Config) validate() error {
	if _, err := app.FindPlan(c.DefaultPlan); err != nil {
		return fmt.Errorf("--default-plan: %w", err)
	}
	if c.Signup != "open" && c.Signup != "closed" {
		return fmt.Errorf("--signup must be open or closed")
	}
	if c.RateLimits != "" && c.RateLimits != "off" {
		if _, err := app.LoadRateTable(c.RateLimits); err != nil {
			return err
		}
	}
	if c.DatabaseURL != "" {
		if err := postgres.CheckURL(c.DatabaseURL); err != nil {
			return fmt.Errorf("--database-url: %w", err)
		}
		// Never half-run: until every part is on PostgreSQL, refuse
		// before anything is opened or created.
		if missing := postgres.Missing(); len(missing) > 0 {
			return fmt.Errorf("--database-url: the PostgreSQL backend is not complete yet (docs/deploy.md, PostgreSQL); not implemented: %s", strings.Join(missing, "; "))
		}
	}
	if c.Lease != 0 && c.Lease < 2*time.Second {
		return fmt.Errorf("--lease must be at least 2s")
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("--log-format must be text or json")
	}
	if c.WebhookRetrySchedule == "" {
		c.WebhookRetrySchedule = "0s,1m,5m,30m"
	}
	if _, err := app.ParseRetrySchedule(c.WebhookRetrySchedule); err != nil {
		return err
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if _, err := web.ParseTrustedProxies(c.TrustedProxies); err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	if c.BaseURL != "" {
		if u, err := url.Parse(c.BaseURL); err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("--base-url must be an https:// URL")
		}
	}
	if c.TSAURL != "" {
		if u, err := url.Parse(c.TSAURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("--tsa-url must be an http:// or https:// URL")
		}
	}
	return nil
}

// Main is a running Folio server.
type Main struct {
	Config Config
	Logger *slog.Logger
	Now    func() time.Time

	// DB and Bolt are the embedded stores; PG is PostgreSQL instead of
	// both under --database-url (backend.go).
	DB   *store.DB
	Bolt *store.Bolt
	PG   *postgres.DB
	// RateWindows, when set, keeps the rate-limit windows and login
	// throttles instead of memory and bbolt: PostgreSQL's, which every
	// replica shares (--database-url).
	RateWindows app.RateWindows
	// Secrets, when set, keeps the JWT, download-link and signing keys
	// (PostgreSQL's secrets table); nil: the files <data>/keys/*.key.
	Secrets app.Secrets
	// Tasks, when set, lets one replica of several run the janitor's pass
	// per interval (PostgreSQL's advisory locks); nil: this process alone
	// runs it.
	Tasks   app.TaskLock
	backend *backend
	Server  *web.Server
	Certs   *web.Certs
	// Metrics are served at /metrics (created by Open when nil).
	Metrics *app.Metrics

	ln           net.Listener
	stopWorkers  func(context.Context)
	stopJanitor  func()
	stopBackfill func()
	// backfilled is closed when the roll-up backfill has returned (the
	// growth benchmark waits for it before timing the reads).
	backfilled   chan struct{}
	stopIdleTrim func()
	// IdleTrim returns memory to the system after a load (app/idletrim.go).
	IdleTrim      *app.IdleTrim
	stopDeliverer func(context.Context)
	stopLimits    func()
	stopHangup    func()
	sweepers      []app.Sweeper
	// reloadOnHangup makes Open reload the certificate on SIGHUP (serve).
	reloadOnHangup bool
	admin          *web.AdminSocket
	served         chan error
}

// Open opens the stores, starts the workers and begins serving HTTPS. It
// returns once the listener is bound.
func (m *Main) Open(ctx context.Context) (err error) {
	c := &m.Config
	if err := c.validate(); err != nil {
		return err
	}
	if m.Now == nil {
		m.Now = time.Now
	}
	if m.Logger == nil {
		m.Logger = newLogger(os.Stderr, c.LogFormat)
	}
	if m.Metrics == nil {
		m.Metrics = app.NewMetrics()
	}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	if err := store.PrivateDir(c.Data); err != nil {
		return err
	}
	be, err := m.openBackend(ctx)
	if err != nil {
		return err
	}
	m.backend = be
	// The certificate exists before the port opens: a client that connects
	// as soon as it can must find the file it trusts.
	if err := m.openCerts(); err != nil {
		return err
	}
	if m.ln, err = net.Listen("tcp", c.Addr); err != nil {
		return err
	}
	if c.BaseURL == "" {
		c.BaseURL = "https://" + m.ln.Addr().String()
	}
	if m.Secrets == nil {
		m.Secrets = store.KeyDir(filepath.Join(c.Data, "keys"))
	}
	jwtKey, err := m.Secrets.Secret(ctx, app.SecretJWT)
	if err != nil {
		return err
	}
	dlKey, err := m.Secrets.Secret(ctx, app.SecretDownload)
	if err != nil {
		return err
	}
	// The key-encryption key of the teams' signing keys (app/signing.go):
	// created once, 0600, backed up with keys/ (or in the database).
	signingKEK, err := m.Secrets.Secret(ctx, app.SecretSigning)
	if err != nil {
		return err
	}
	mailer, err := newMailer(c, m.Now)
	if err != nil {
		return err
	}
	engine, err := render.NewEngine(c.engineFonts(m.Logger))
	if err != nil {
		return err
	}
	files, err := m.openFiles(ctx)
	if err != nil {
		return err
	}
	db := be.records
	activity := &app.ActivityLog{Store: db, Logger: m.Logger, Now: m.Now}
	assetSvc := &app.AssetService{Assets: db, Teams: db, Files: files, Memory: engine, Now: m.Now}
	meta := &app.MetaCache{Gen: db} // keys, users, teams, templates (docs/decisions.md, "Metadata cache")
	assetSvc.Meta = meta            // each team's font assets
	templates := &app.TemplateService{Templates: meta.Templates(db), Teams: db, Engine: engine, Now: m.Now, Activity: activity, Assets: assetSvc}
	if templates.Images, err = newImageFetcher(c); err != nil {
		return err
	}
	docs := &app.DocumentService{
		Jobs: db, Batches: db, Templates: templates, Teams: meta.Teams(db), Meta: meta, Queue: be.queue, Files: files,
		Downloads: app.Downloads{Key: dlKey, BaseURL: c.BaseURL}, Logger: m.Logger, Now: m.Now, Metrics: m.Metrics,
		Limits: c.Limits, GenerateWait: c.GenerateWait, InlineMax: c.InlineMax, JobLease: c.Lease,
	}
	docs.Signing = &app.SigningService{Store: db, Activity: activity, KEK: signingKEK, Now: m.Now}
	if c.TSAURL != "" {
		docs.Signing.TSA = &pades.TSA{URL: c.TSAURL}
	}
	if testHookDocuments != nil {
		testHookDocuments(docs)
	}
	authLimits, err := m.rateLimiter(ctx, "auth", be.authRates) // login and account throttles
	if err != nil {
		return err
	}
	auth := &app.AuthService{Users: meta.Users(db), Teams: meta.Teams(db), Tokens: db, Keys: meta.Keys(db), Meta: meta, Accounts: db, TwoFactor: db, Mailer: mailer, Limiter: authLimits,
		Config: app.AuthConfig{JWTKey: jwtKey, BaseURL: c.BaseURL, SignupOpen: c.Signup == "open", DefaultPlan: c.DefaultPlan}, Now: m.Now}
	accounts := &app.AccountService{Users: db, Accounts: db, TwoFactor: db, Teams: db, Keys: db, Templates: db, Activity: activity,
		Auth: auth, Mailer: mailer, Files: files, Memory: engine, Limiter: auth.Limiter, BaseURL: c.BaseURL, Logger: m.Logger, Now: m.Now}
	m.Server = &web.Server{
		Auth: auth,
		Teams: &app.TeamService{Teams: db, Invitations: db, Users: db, Activity: activity, Mailer: mailer,
			Config: app.TeamConfig{BaseURL: c.BaseURL, DefaultPlan: c.DefaultPlan}, Now: m.Now},
		Accounts:          accounts,
		Assets:            assetSvc,
		Signing:           docs.Signing,
		Keys:              &app.KeyService{Keys: db, Teams: db, Now: m.Now},
		Templates:         templates,
		Documents:         docs,
		ReadHeaderTimeout: c.ReadHeaderTimeout, ReadTimeout: c.ReadTimeout,
		Analytics: &app.AnalyticsService{Store: db, Counts: db, Dash: db, Jobs: db, Templates: db, Teams: db, Assets: db, Now: m.Now},
		Logger:    m.Logger,
	}
	if m.PG != nil {
		m.Server.Unavailable = postgres.Unavailable
	}
	m.openOps(docs)
	if err := m.openWebhooks(ctx, docs); err != nil {
		return err
	}
	if err := m.openRateLimits(ctx); err != nil {
		return err
	}
	sessions := m.openDashboard(auth)
	if m.stopWorkers, err = docs.Start(ctx, c.Workers); err != nil {
		return err
	}
	m.sweepers = []app.Sweeper{docs.Sweep, accounts.Sweep, sessions.Sweep, m.Server.Webhooks.Sweep}
	var rateSweep []app.Sweeper
	if m.Tasks != nil {
		// Several replicas: one of them runs each pass.
		m.sweepers = []app.Sweeper{app.OneReplica(m.Tasks, "janitor", janitorEvery, m.Logger, m.Now, m.sweepers...)}
		if rs, ok := m.RateWindows.(app.RateSweeper); ok {
			rateSweep = []app.Sweeper{app.OneReplica(m.Tasks, "rate-window sweep", time.Minute, m.Logger, m.Now, app.SweepRates(rs, m.Now, m.Logger))}
		}
	}
	if !c.NoJanitor {
		jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		var wg sync.WaitGroup
		m.stopJanitor = func() { cancel(); wg.Wait() }
		wg.Go(func() { app.RunJanitor(jctx, m.Logger, janitorEvery, m.sweepers...) })
		if rateSweep != nil {
			wg.Go(func() { app.RunJanitor(jctx, m.Logger, time.Minute, rateSweep...) })
		}
	}
	// After a load: the kept batch lists, page compressors and idle SQLite
	// readers go, then the executable's pages leave the RSS (issue 24).
	m.IdleTrim = &app.IdleTrim{Hooks: []func(){docs.TrimCaches, render.TrimCaches}, Logger: m.Logger,
		After: []func(){func() { app.DropFilePages() }}}
	if be.trimIdle != nil {
		m.IdleTrim.Hooks = append(m.IdleTrim.Hooks, be.trimIdle)
	}
	ictx, stopIdle := context.WithCancel(context.WithoutCancel(ctx))
	idleDone := make(chan struct{})
	m.stopIdleTrim = func() { stopIdle(); <-idleDone }
	go func() {
		defer close(idleDone)
		m.IdleTrim.Run(ictx)
	}()
	m.admin = &web.AdminSocket{Path: filepath.Join(c.Data, "admin.sock"), Logger: m.Logger,
		Backup: func(ctx context.Context, withFiles bool, w io.Writer, progress func(copied, total int64)) error {
			if withFiles && c.FilesURL != "" {
				return errFilesInS3
			}
			if m.DB == nil {
				return errBackupPostgres
			}
			return store.WriteBackup(ctx, m.DB, m.Bolt, c.Data, withFiles, w, progress)
		}}
	if err := m.admin.Listen(); err != nil {
		// Operator commands fall back to the files; only a live backup needs it.
		m.Logger.Warn("admin socket unavailable; folio admin backup will need the server stopped", "path", m.admin.Path, "err", err)
		m.admin = nil
	} else {
		go func(a *web.AdminSocket) {
			// Serving goes on without the socket: only a live backup needs it.
			if err := a.Serve(); err != nil {
				m.Logger.Error("admin socket stopped; folio admin backup cannot reach this server until it restarts", "path", a.Path, "err", err)
			}
		}(m.admin)
	}
	if m.reloadOnHangup {
		// Before serving: a SIGHUP sent as soon as the port answers must
		// reload, not kill the process (SIGHUP's default action).
		m.stopHangup = m.Certs.ReloadOnHangup(m.Logger)
	}
	m.served = make(chan error, 1)
	go func() { m.served <- m.Server.Serve(m.ln, m.Certs.Get) }()
	m.Logger.Info("folio serving", "url", c.BaseURL, "data", c.Data, "workers", c.Workers, "version", version)
	return nil
}

// backfillRollups fills the roll-ups a migration added from the rows that
// existed before it, in short transactions beside the requests, and logs
// what it wrote (store/rollup.go). Stopped by Close, it goes on at the
// next start.
func (m *Main) backfillRollups(ctx context.Context) {
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	m.stopBackfill = func() { cancel(); <-done }
	m.backfilled = done
	go func() {
		defer close(done)
		st, err := m.DB.BackfillRollups(bctx)
		if st.Transactions == 0 && err == nil {
			return
		}
		args := []any{"transactions", st.Transactions, "longest_ms", float64(st.Longest.Microseconds()) / 1000,
			"over_50ms", st.Slow, "duration_ms", st.Duration.Milliseconds()}
		for _, t := range []string{"job_stats", "webhook_deliveries", "jobs"} {
			args = append(args, "read_"+t, st.Source[t])
		}
		for _, t := range []string{"job_team_hours", "job_team_days", "delivery_hours", "job_list_hours", "job_template_days", "job_template_hours"} {
			args = append(args, t, st.Rows[t])
		}
		switch {
		case bctx.Err() != nil:
			m.Logger.Info("rollup backfill stopped; the next start goes on", args...)
		case err != nil:
			m.Logger.Error("rollup backfill failed; analytics read the older tables", append(args, "err", err)...)
		default:
			m.Logger.Info("rollup backfill", args...)
		}
	}()
}

// Sweep runs each of the janitor's tasks once.
func (m *Main) Sweep(ctx context.Context) error {
	var errs []error
	for _, sw := range m.sweepers {
		errs = append(errs, sw(ctx))
	}
	return errors.Join(errs...)
}

// testHookDocuments lets tests wrap the document service's stores before
// the workers start (nil outside tests).
var testHookDocuments func(*app.DocumentService)

// testHookDeliverer lets tests adjust or wrap the deliverer before it
// starts (nil outside tests).
var testHookDeliverer func(*app.Deliverer)

// openWebhooks starts the webhook deliverer on its own pool and lets the
// document workers dispatch to it.
func (m *Main) openWebhooks(ctx context.Context, docs *app.DocumentService) error {
	c := &m.Config
	retries, err := app.ParseRetrySchedule(c.WebhookRetrySchedule)
	if err != nil {
		return err
	}
	var ca []byte
	if c.WebhookCA != "" {
		if ca, err = os.ReadFile(c.WebhookCA); err != nil {
			return fmt.Errorf("--webhook-ca: %w", err)
		}
	}
	client, err := app.NewWebhookClient(c.WebhookAllowPrivate, ca)
	if err != nil {
		return err
	}
	d := &app.Deliverer{Store: m.backend.records, Queue: m.backend.schedule, Client: client, Retries: retries,
		Workers: c.WebhookWorkers, Logger: m.Logger, Now: m.Now, Metrics: m.Metrics, Lease: c.Lease}
	if c.Lease > 0 {
		// An attempt ends before its lease does: never sent twice at once.
		d.Timeout = min(30*time.Second, c.Lease/2)
	}
	if testHookDeliverer != nil {
		testHookDeliverer(d)
	}
	docs.Webhooks = d
	m.Server.Webhooks = &app.WebhookService{Store: m.backend.records, Deliverer: d, AllowPrivate: c.WebhookAllowPrivate, Now: m.Now, Logger: m.Logger}
	m.stopDeliverer, err = d.Start(ctx)
	return err
}

// openDashboard mounts the HTML dashboard on the server's services, with
// its sessions in SQLite.
func (m *Main) openDashboard(auth *app.AuthService) *app.SessionService {
	sv := m.Server
	sessions := &app.SessionService{Sessions: m.backend.records, Auth: auth, Now: m.Now}
	sv.Dashboard = &dashboard.Dashboard{Sessions: sessions, Auth: sv.Auth, Keys: sv.Keys, Templates: sv.Templates, Documents: sv.Documents, Assets: sv.Assets,
		Analytics: sv.Analytics, Webhooks: sv.Webhooks, Teams: sv.Teams, Accounts: sv.Accounts, Logger: m.Logger}
	return sessions
}

// openRateLimits applies --rate-limits (Set 2 by default, a file, or off)
// with counters persisted in bbolt.
func (m *Main) openRateLimits(ctx context.Context) error {
	c := &m.Config
	if c.RateLimits == "off" {
		return nil
	}
	table := app.DefaultRateTable()
	if c.RateLimits != "" {
		var err error
		if table, err = app.LoadRateTable(c.RateLimits); err != nil {
			return err
		}
	}
	l, err := m.rateLimiter(ctx, "api", m.backend.apiRates)
	if err != nil {
		return err
	}
	l.CountRefused = true // the API counts every request, refused ones too
	m.Server.Rates = &web.RateLimits{Table: table, Limiter: l, Now: m.Now}
	return nil
}

// rateLimiter is the limiter called name over m.RateWindows, shared by
// the replicas, or, without them, over windows in memory that are saved
// to st (bbolt) every 2 seconds and at Close: no request waits for a disk.
func (m *Main) rateLimiter(ctx context.Context, name string, st app.RateStore) (*app.RateLimiter, error) {
	if m.RateWindows != nil {
		return &app.RateLimiter{Windows: m.RateWindows, Name: name}, nil
	}
	w := app.NewMemoryLimiter()
	if err := m.persistLimits(ctx, w, st); err != nil {
		return nil, err
	}
	return &app.RateLimiter{Windows: w, Name: name}, nil
}

// persistLimits loads l's counters from st and saves what changed every 2
// seconds and at Close.
func (m *Main) persistLimits(ctx context.Context, l *app.MemoryLimiter, st app.RateStore) error {
	if st == nil {
		return nil
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	wait, err := app.PersistLimiter(pctx, l, st, 2*time.Second, m.Now, m.Logger)
	if err != nil {
		cancel()
		return err
	}
	stopOthers := m.stopLimits
	m.stopLimits = func() {
		cancel()
		wait()
		if stopOthers != nil {
			stopOthers()
		}
	}
	return nil
}

// openOps gives the server its metrics, readiness checks and metrics token,
// and registers the gauges read from the stores at scrape time.
func (m *Main) openOps(docs *app.DocumentService) {
	c := &m.Config
	m.Server.Metrics = m.Metrics
	m.Server.MetricsToken = c.MetricsToken
	m.Server.TrustedProxies, _ = web.ParseTrustedProxies(c.TrustedProxies) // checked by validate
	minFree := uint64(max(c.MinFreeMB, 0)) << 20
	m.Server.Checks = []web.Check{{Name: m.backend.name, Run: m.backend.records.Ping}}
	if m.Bolt != nil {
		m.Server.Checks = append(m.Server.Checks, web.Check{Name: "bbolt", Run: func(context.Context) error { return m.Bolt.Ping() }})
	}
	m.Server.Checks = append(m.Server.Checks, []web.Check{
		{Name: "dataDir", Run: func(context.Context) error { return store.CheckWritable(c.Data) }},
		{Name: "disk", Run: func(context.Context) error { return store.CheckFreeSpace(c.Data, minFree) }},
		{Name: "workers", Run: func(context.Context) error {
			if docs.WorkersRunning() == 0 {
				return errors.New("no document worker is running")
			}
			return nil
		}},
	}...)
	m.Metrics.ObserveProcess(version, commit, date, time.Now())
	if m.backend.queueTotals != nil {
		m.Metrics.ObserveQueue(docs.WorkersRunning, m.backend.queueTotals)
	}
}

func (m *Main) openCerts() error {
	c := &m.Config
	cert, key := c.TLSCert, c.TLSKey
	if cert == "" {
		host, _, _ := net.SplitHostPort(c.Addr)
		var err error
		if cert, key, err = web.SelfSigned(filepath.Join(c.Data, "tls"), host); err != nil {
			return err
		}
	}
	m.Certs = &web.Certs{CertFile: cert, KeyFile: key}
	return m.Certs.Load()
}

func newMailer(c *Config, now func() time.Time) (app.Mailer, error) {
	const from = "Folio <folio@localhost>"
	if c.SMTPURL != "" {
		return store.NewSMTP(c.SMTPURL, from, now)
	}
	return &store.Outbox{Dir: store.OutboxDir(c.Data), From: from, Now: now}, nil
}

func newLogger(w io.Writer, format string) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// Close stops serving and working within the shutdown grace period (in-flight
// requests and running jobs finish; queued jobs stay queued; see drain) and
// closes the stores.
func (m *Main) Close() error {
	var errs []error
	if m.admin != nil {
		if err := m.admin.Close(); err != nil {
			m.Logger.Warn("admin socket close", "path", m.admin.Path, "err", err)
		}
	}
	// A janitor pass ends within one of its short steps (store/maintain.go);
	// it stops first so the writer is the requests' during the grace.
	if m.stopJanitor != nil {
		m.stopJanitor()
	}
	if m.stopBackfill != nil {
		m.stopBackfill()
	}
	if m.stopIdleTrim != nil {
		m.stopIdleTrim()
	}
	m.drain()
	if m.stopHangup != nil {
		m.stopHangup()
	}
	if m.stopLimits != nil {
		m.stopLimits()
	}
	if m.Bolt != nil {
		errs = append(errs, m.Bolt.Close())
	}
	if m.DB != nil {
		errs = append(errs, m.DB.Close())
	}
	if m.PG != nil {
		errs = append(errs, m.PG.Close())
	}
	return errors.Join(errs...)
}

// drain stops accepting connections and gives in-flight requests, running
// jobs and webhook attempts one shared grace period (--shutdown-grace) to
// end. Requests still open then are cut off; jobs and attempts still running
// are left queued for the next start.
func (m *Main) drain() {
	grace := m.Config.ShutdownGrace
	if grace <= 0 {
		grace = defaultShutdownGrace
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	switch {
	case m.Server != nil && m.served != nil:
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Server.Shutdown(ctx); err != nil {
				m.Logger.Warn("shutdown grace over: closing connections still open", "grace", grace.String())
				m.Server.Close()
			}
		}()
	case m.ln != nil:
		m.ln.Close() // never served
	}
	for _, stop := range []func(context.Context){m.stopWorkers, m.stopDeliverer} {
		if stop != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stop(ctx)
			}()
		}
	}
	wg.Wait()
	if m.Logger != nil && m.served != nil {
		m.Logger.Info("stopped serving and working", "duration_ms", time.Since(start).Milliseconds(), "grace_exceeded", ctx.Err() != nil)
	}
}

// URL is the base URL the server answers on.
func (m *Main) URL() string { return m.Config.BaseURL }

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet()
	fs.SetOutput(stderr)
	m := &Main{reloadOnHangup: true}
	m.Config.flags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	store.RestrictUmask()
	// The first SIGINT or SIGTERM starts the graceful drain (Close); a
	// second one during it forces an exit.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	first := make(chan os.Signal, 1)
	go func() {
		select {
		case sig := <-sigs:
			first <- sig
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := m.Open(ctx); err != nil {
		return err
	}
	var served error
	select {
	case sig := <-first:
		m.Logger.Info("shutting down", "signal", sig.String(), "forceExit", "send the signal again")
	case served = <-m.served:
	}
	cancel() // from here on, a signal forces the exit
	closed := make(chan error, 1)
	go func() { closed <- m.Close() }()
	select {
	case err := <-closed:
		if served != nil {
			return served
		}
		return err
	case sig := <-sigs:
		return m.forceExit(sig)
	}
}

// forceExit ends a drain that a second signal cut short, at once: queued
// jobs are safe in the durable queue, and the jobs still running go back
// to pending if the database takes that within a second (else the next
// start counts their run as a crash, app.MaxJobCrashes); both run again at
// the next start. The exit status is 128 + the signal's number, as a shell
// reports a process that a signal ended (130 for SIGINT, 143 for SIGTERM).
func (m *Main) forceExit(sig os.Signal) error {
	m.Logger.Error("forced exit: a second signal during the drain", "signal", sig.String())
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	released := make(chan struct{})
	go func() {
		defer close(released)
		n, err := m.Server.Documents.ReleaseRunning(ctx)
		if err != nil {
			m.Logger.Error("forced exit: running jobs not all released; the next start counts their run as a crash", "released", n, "err", err)
		} else if n > 0 {
			m.Logger.Info("forced exit: running jobs released to pending", "count", n)
		}
	}()
	select {
	case <-released:
	case <-ctx.Done():
		m.Logger.Error("forced exit: releasing running jobs took over a second; the next start counts their run as a crash")
	}
	code := 1
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	return &exitError{code: code, err: fmt.Errorf("forced exit on a second %s during the drain", sig)}
}

func newFlagSet() *flag.FlagSet { return flag.NewFlagSet("serve", flag.ContinueOnError) }

// admin runs operator commands. They touch only SQLite (the server holds the
// bbolt file), so they are safe beside a running server.
func admin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: folio admin create-user|verify-email|set-plan|add-credits|backup|grow|migrate [flags]")
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("admin "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "./folio-data", "data directory")
	email := fs.String("email", "", "user email")
	password := fs.String("password", "", "user password (min 8 characters)")
	name := fs.String("name", "", "user name")
	verified := fs.Bool("verified", false, "mark the email verified")
	defaultPlan := fs.String("default-plan", app.PlanUnlimited, "create-user: plan of the new user's personal team (as serve's --default-plan)")
	team := fs.String("team", "", "team id or slug")
	plan := fs.String("plan", "", app.PlanNames)
	docs := fs.Int64("documents", 0, "number of document credits")
	out := fs.String("out", "", "backup archive to write (.tar.gz)")
	withFiles := fs.Bool("with-files", false, "backup: include generated documents")
	timeout := fs.Duration("timeout", 0, "backup: give up when the backup has not finished after this long, e.g. 30m (default: no limit)")
	databaseURL := fs.String("database-url", "", "the PostgreSQL database of an install with several replicas (as serve's; FOLIO_DATABASE_URL)")
	var g store.GrowOptions
	fs.IntVar(&g.Jobs, "jobs", 10_000, "grow: job rows to write")
	fs.IntVar(&g.Teams, "teams", 1000, "grow: small teams beside the big one")
	fs.IntVar(&g.Days, "days", 90, "grow: days of history")
	toDB := fs.String("to-database-url", "", "migrate: the PostgreSQL database to copy the install into (postgres://...)")
	toFiles := fs.String("to-files-url", "", "migrate: the S3 bucket to copy the files into (s3://bucket/prefix?endpoint=...); credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	envDefaults(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *databaseURL != "" && cmd != "migrate" {
		// Never act on a local SQLite that the servers do not use.
		if cmd == "backup" {
			return errors.New("backup: with --database-url the records, queue, rate limits and keys are in PostgreSQL, which this command does not copy; " +
				"back the database up with pg_dump (pg_dump --format=custom --file=folio.dump DATABASE_URL, restored with pg_restore) and the files with the object store's tools (docs/deploy.md, Backups)")
		}
		return fmt.Errorf("%s: works on an embedded install's --data only; with --database-url the records are in PostgreSQL (not supported by this command yet)", cmd)
	}
	switch cmd {
	case "backup":
		return backup(ctx, *data, *out, *withFiles, *timeout, web.BackupTimeouts{}, stdout, stderr)
	case "grow":
		return grow(ctx, *data, g, stdout, stderr)
	case "migrate":
		return migrateInstall(ctx, *data, *toDB, *toFiles, stdout, stderr)
	}
	if _, err := app.FindPlan(*defaultPlan); err != nil && cmd == "create-user" {
		return fmt.Errorf("--default-plan: %w", err)
	}
	if _, err := os.Stat(filepath.Join(*data, "folio.db")); err != nil && cmd != "create-user" {
		return fmt.Errorf("no Folio database in %s (--data)", *data)
	}
	if err := store.PrivateDir(*data); err != nil {
		return err
	}
	db, err := store.Open(ctx, filepath.Join(*data, "folio.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	teams := &app.TeamAdmin{Teams: db, Now: time.Now}
	switch cmd {
	case "create-user":
		auth := &app.AuthService{Users: db, Teams: db, Tokens: db, Mailer: &store.Outbox{Dir: store.OutboxDir(*data), From: "Folio <folio@localhost>", Now: time.Now},
			Config: app.AuthConfig{DefaultPlan: *defaultPlan}, Now: time.Now}
		u, err := auth.CreateUser(ctx, app.CreateUserInput{SignupInput: app.SignupInput{Email: *email, Password: *password, Name: *name}, Verified: *verified})
		if err != nil {
			return adminErr(err)
		}
		fmt.Fprintf(stdout, "created user %s <%s> with personal team %s on plan %s\n", u.ID, u.Email, u.PersonalTeamID, *defaultPlan)
	case "verify-email":
		if err := (&app.AuthService{Users: db, Now: time.Now}).VerifyEmailByAddress(ctx, *email); err != nil {
			return adminErr(err)
		}
		fmt.Fprintf(stdout, "verified %s\n", *email)
	case "set-plan":
		t, err := teams.SetPlan(ctx, *team, *plan)
		if err != nil {
			return adminErr(err)
		}
		fmt.Fprintf(stdout, "team %s (%s) is now on plan %s\n", t.ID, t.Slug, t.Plan)
	case "add-credits":
		t, err := teams.AddCredits(ctx, *team, *docs)
		if err != nil {
			return adminErr(err)
		}
		fmt.Fprintf(stdout, "team %s (%s) now has %d credits\n", t.ID, t.Slug, t.Credits)
	default:
		return fmt.Errorf("unknown admin command %q (create-user, verify-email, set-plan, add-credits, backup, grow, migrate)", cmd)
	}
	return nil
}

// bench starts a server on a temp data dir (scale plan, loopback, TLS, no
// rate limits) and drives it over keep-alive HTTPS (docs/performance.md).
func bench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "growth" {
		return benchGrowth(ctx, args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	conc := fs.Int("concurrency", 8, "concurrent clients")
	dur := fs.Duration("duration", 10*time.Second, "time per scenario")
	scen := fs.String("scenarios", strings.Join(client.Scenarios, ","), "scenarios to run (also: "+strings.Join(client.ExtraScenarios, ",")+")")
	examples := fs.String("examples", "testdata/templates", "directory with invoice.json and invoice.vars.json")
	workers := fs.Int("workers", runtime.NumCPU(), "document workers")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the scenarios to this file")
	keep := fs.String("data", "", "data directory to create and keep (default: a temp directory, removed at the end)")
	filesURL := fs.String("files-url", os.Getenv("FOLIO_FILES_URL"), "keep the documents over 64 KB, assets and avatars in S3, as serve's --files-url")
	inlineMax := fs.Int("inline-max", 0, "largest document kept in SQLite (0: 64 KB; -1: every document a file, to time the file store)")
	servers := fs.String("server", "", "comma-separated https:// URLs of running replicas to drive instead of an in-process server (requests go round-robin, as through a load balancer; no render scenario)")
	caPath := fs.String("ca", "", "with --server: PEM certificate to trust besides the system's (e.g. a replica's <data>/tls/cert.pem)")
	dbURL := fs.String("database-url", "", "with --server: the replicas' PostgreSQL, to verify the bench account's email and fund its team (not needed on --default-plan unlimited)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *servers != "" {
		sc := strings.Split(*scen, ",")
		if !isFlagSet(fs, "scenarios") {
			sc = slices.DeleteFunc(sc, func(s string) bool { return s == "render" })
		}
		return benchServers(ctx, strings.Split(*servers, ","), *caPath, *dbURL, client.BenchConfig{
			Examples: *examples, Concurrency: *conc, Duration: *dur, Scenarios: sc,
			Progress: func(name string) { fmt.Fprintf(stderr, "running %s for %s...\n", name, *dur) },
			Profile:  *cpuProfile,
		}, *asJSON, stdout)
	}
	data := *keep
	if data == "" {
		var err error
		if data, err = os.MkdirTemp("", "folio-bench-"); err != nil {
			return err
		}
		defer os.RemoveAll(data)
	} else if err := os.Mkdir(data, 0o700); err != nil {
		return fmt.Errorf("bench --data must name a new directory: %w", err)
	}
	hooks, err := client.StartReceiver()
	if err != nil {
		return err
	}
	defer hooks.Close()
	caFile := filepath.Join(data, "bench-hooks-ca.pem")
	if err := os.WriteFile(caFile, hooks.CAPEM, 0o600); err != nil {
		return err
	}
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: data, Workers: *workers, DefaultPlan: "scale", Signup: "open", LogFormat: "text", RateLimits: "off",
		WebhookAllowPrivate: true, WebhookCA: caFile, FilesURL: *filesURL, InlineMax: *inlineMax}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := m.Open(ctx); err != nil {
		return err
	}
	defer m.Close()
	ca, err := os.ReadFile(filepath.Join(data, "tls", "cert.pem"))
	if err != nil {
		return err
	}
	c, err := client.New(m.URL(), "", ca)
	if err != nil {
		return err
	}
	admin := &app.TeamAdmin{Teams: m.DB, Now: time.Now}
	res, err := client.Bench(ctx, client.BenchConfig{
		Client: c, Examples: *examples, Concurrency: *conc, Duration: *dur, Scenarios: strings.Split(*scen, ","),
		Fund: func(team string) error { _, err := admin.AddCredits(ctx, team, 100_000_000); return err },
		Verify: func(email string) error {
			return (&app.AuthService{Users: m.DB, Now: time.Now}).VerifyEmailByAddress(ctx, email)
		},
		Hooks: hooks,
		RenderOnly: func(def json.RawMessage, vars map[string]any) (client.Op, error) {
			var t app.Template
			if err := json.Unmarshal(def, &t); err != nil {
				return nil, err
			}
			f, err := m.Server.Templates.RenderFunc(t.Definition(), "pdf", vars)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) (int, error) { return 1, f(ctx, io.Discard) }, nil
		},
		Progress: func(name string) { fmt.Fprintf(stderr, "running %s for %s...\n", name, *dur) },
		Profile:  *cpuProfile,
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return client.WriteJSON(stdout, res)
	}
	client.WriteTable(stdout, res)
	return nil
}

// isFlagSet reports whether the command line set flag name.
func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// benchServers drives running replicas (folio bench --server): the same
// scenarios, sent round-robin over the URLs. The render-only scenario
// needs the engine in process and is not run; the batch scenario polls
// (the replicas need not trust a webhook receiver here). With a database
// URL the bench account is verified and funded there, as the embedded
// bench does in SQLite.
func benchServers(ctx context.Context, urls []string, caFile, dbURL string, cfg client.BenchConfig, asJSON bool, stdout io.Writer) error {
	if slices.Contains(cfg.Scenarios, "render") {
		return fmt.Errorf("bench --server: the render scenario needs the engine in this process; leave it out of --scenarios")
	}
	var ca []byte
	if caFile != "" {
		var err error
		if ca, err = os.ReadFile(caFile); err != nil {
			return fmt.Errorf("--ca: %w", err)
		}
	}
	for i, u := range urls {
		p, err := url.Parse(strings.TrimSpace(u))
		if err != nil || p.Scheme != "https" || p.Host == "" {
			return fmt.Errorf("--server: %q is not an https:// URL", u)
		}
		urls[i] = p.Host
	}
	c, err := client.New("https://"+urls[0], "", ca)
	if err != nil {
		return err
	}
	c.HTTP.Transport = &roundRobin{hosts: urls, next: c.HTTP.Transport}
	cfg.Client = c
	if dbURL != "" {
		db, err := postgres.Open(ctx, dbURL)
		if err != nil {
			return fmt.Errorf("--database-url: %w", err)
		}
		defer db.Close()
		admin := &app.TeamAdmin{Teams: db, Now: time.Now}
		cfg.Fund = func(team string) error { _, err := admin.AddCredits(ctx, team, 100_000_000); return err }
		cfg.Verify = func(email string) error {
			return (&app.AuthService{Users: db, Now: time.Now}).VerifyEmailByAddress(ctx, email)
		}
	}
	res, err := client.Bench(ctx, cfg)
	if err != nil {
		return err
	}
	if asJSON {
		return client.WriteJSON(stdout, res)
	}
	client.WriteTable(stdout, res)
	fmt.Fprintf(stdout, "(%d replicas; CPU ms/doc is this client's only: the replicas' and the databases' are theirs)\n", len(urls))
	return nil
}

// roundRobin sends each request to the next of hosts, as a load balancer
// in front of the replicas does.
type roundRobin struct {
	hosts []string
	n     atomic.Uint64
	next  http.RoundTripper
}

func (rr *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Host = rr.hosts[(rr.n.Add(1)-1)%uint64(len(rr.hosts))]
	req.Host = ""
	return rr.next.RoundTrip(req)
}

// benchGrowth serves a data directory `folio admin grow` wrote (no
// janitor, no rate limits) and times every read endpoint and dashboard page
// on it, then optionally writes during one janitor pass
// (docs/performance.md, Growth).
func benchGrowth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench growth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "", "data directory written by folio admin grow")
	n := fs.Int("requests", 50, "timed requests per endpoint")
	only := fs.String("only", "", "only the endpoints whose name contains this")
	sweep := fs.Bool("maintenance", false, "then run the janitor once while timing writes (deletes what retention says)")
	logFile := fs.String("log", "", "write the server's log to this file")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	traceSlow := fs.String("trace-slow", "", "keep an execution trace of the last seconds in memory and write it to this directory after each step over 50 ms (at most 20)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	grown, err := store.LoadGrowResult(filepath.Join(*data, store.GrowResultFile))
	if err != nil {
		return fmt.Errorf("bench growth --data: %w (grow one with folio admin grow)", err)
	}
	logs := io.Discard
	if *logFile != "" {
		f, err := os.Create(*logFile)
		if err != nil {
			return err
		}
		defer f.Close()
		logs = f
	}
	// Every maintenance step and backfill chunk, by kind (the JSON's steps).
	type stepTimes struct {
		held, stmts []time.Duration
		rows        int
		interrupted int
		walMax      int
		short, busy int
	}
	var stepsMu sync.Mutex
	steps := map[string]*stepTimes{}
	var slow []client.SlowStep
	saveTrace := func(int) string { return "" }
	if *traceSlow != "" {
		save, stop, err := flightRecorder(*traceSlow, stderr)
		if err != nil {
			return err
		}
		defer stop()
		saveTrace = save
	}
	stopSteps := store.ObserveSteps(func(st store.StepTime) {
		stepsMu.Lock()
		defer stepsMu.Unlock()
		if st.Held > 50*time.Millisecond {
			s := client.SlowStep{Kind: st.Kind, Ended: st.Ended.UTC(), Rows: st.Rows, HeldMs: client.Ms(st.Held), StatementsMs: client.Ms(st.Statements),
				CPUMs: client.Ms(st.CPU), InBlocks: st.InBlocks, Preempted: st.Preempted, GCs: st.GCs, Detail: st.Detail,
				Interrupted: st.Interrupted, Kernel: st.Kernel, WALFrames: st.WAL.Frames, WALBackfilled: st.WAL.Backfilled}
			s.Trace = saveTrace(len(slow))
			slow = append(slow, s)
			fmt.Fprintf(stderr, "slow step: %+v\n", s)
		}
		k := steps[st.Kind]
		if k == nil {
			k = &stepTimes{}
			steps[st.Kind] = k
		}
		k.held, k.stmts, k.rows = append(k.held, st.Held), append(k.stmts, st.Statements), k.rows+st.Rows
		if st.Interrupted {
			k.interrupted++
		}
		if w := st.After; w.Frames > 0 || w.Busy {
			k.walMax = max(k.walMax, w.Frames)
			if w.Backfilled < w.Frames {
				k.short++
			}
			if w.Busy {
				k.busy++
			}
		}
	})
	defer stopSteps()
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: *data, Workers: runtime.NumCPU(), DefaultPlan: "free", Signup: "open", LogFormat: "text",
		RateLimits: "off", NoJanitor: true}, Logger: slog.New(slog.NewTextHandler(logs, nil))}
	if err := m.Open(ctx); err != nil {
		return err
	}
	defer m.Close()
	ca, err := os.ReadFile(filepath.Join(*data, "tls", "cert.pem"))
	if err != nil {
		return err
	}
	c, err := client.New(m.URL(), "", ca)
	if err != nil {
		return err
	}
	// A data set grown before a roll-up's migration is backfilled after
	// start-up; the reads are timed once they read the roll-ups.
	if m.backfilled != nil {
		t0 := time.Now()
		select {
		case <-m.backfilled:
		default:
			fmt.Fprintln(stderr, "waiting for the roll-up backfill...")
			<-m.backfilled
			fmt.Fprintf(stderr, "backfill done in %v\n", time.Since(t0).Round(time.Millisecond))
		}
	}
	cfg := client.GrowthConfig{Client: c, Requests: *n, Only: *only, Progress: func(name string) { fmt.Fprintf(stderr, "%s...\n", name) },
		Data: client.GrowthData{BigTeamID: grown.BigTeamID, OwnerEmail: grown.OwnerEmail, Password: grown.Password, APIKey: grown.APIKey,
			TemplateIDs: grown.TemplateIDs, BatchID: grown.BatchID, SubscriptionID: grown.SubscriptionID, JobID: grown.JobID}}
	if *sweep {
		cfg.Maintenance = m.Sweep
	}
	res, err := client.Growth(ctx, cfg)
	if err != nil {
		return err
	}
	stepsMu.Lock()
	kinds := make([]string, 0, len(steps))
	for k := range steps {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		f := client.StepDurations(k, steps[k].held, steps[k].stmts, steps[k].rows)
		f.Interrupted = steps[k].interrupted
		f.WALMaxFrames, f.CheckpointsShort, f.CheckpointsBusy = steps[k].walMax, steps[k].short, steps[k].busy
		res.Steps = append(res.Steps, f)
	}
	res.SlowSteps = slow
	stepsMu.Unlock()
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	client.WriteGrowthTable(stdout, res)
	return nil
}

// soak runs this binary as a separate server process and drives it with a
// mixed load across many teams (docs/reliability.md).
func soak(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	r := client.SoakRun{Out: stdout, Log: stderr}
	fs.DurationVar(&r.Duration, "duration", 10*time.Minute, "how long to drive load")
	fs.IntVar(&r.Concurrency, "concurrency", 16, "concurrent clients")
	fs.IntVar(&r.Teams, "teams", 20, "teams")
	fs.StringVar(&r.Examples, "examples", "testdata/templates", "directory with invoice.json and invoice.vars.json")
	fs.BoolVar(&r.JSON, "json", false, "print JSON")
	fs.BoolVar(&r.GenerateOnly, "generate-only", false, "send only synchronous PDF generates instead of the mix")
	fs.DurationVar(&r.Idle, "idle", 0, "then sample the server's RSS for this long with no load")
	fs.StringVar(&r.Binary, "server", "", "folio binary to run as the server (default: this one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if r.Binary == "" {
		if r.Binary, err = os.Executable(); err != nil {
			return err
		}
	}
	return client.RunSoak(ctx, r)
}

// backup writes a backup archive, through the running server when there is
// one (it holds the bbolt file), else from the files directly, printing the
// copy's progress on stderr every tenth. timeout, when not 0, bounds the
// whole backup; t bounds waiting on the server (web.FetchBackup).
func backup(ctx context.Context, data, out string, withFiles bool, timeout time.Duration, t web.BackupTimeouts, stdout, stderr io.Writer) error {
	if timeout < 0 {
		return fmt.Errorf("--timeout %s: must not be negative (0: no limit)", timeout)
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	printed := -1
	progress := func(copied, total int64) {
		pct := 100
		if total > 0 {
			pct = int(copied * 100 / total)
		}
		if pct/10 != printed/10 {
			fmt.Fprintf(stderr, "backup: folio.db %d%% copied (%d of %d MB)\n", pct, copied>>20, total>>20)
			printed = pct
		}
	}
	live := func(w io.Writer) (bool, error) {
		return web.FetchBackup(ctx, filepath.Join(data, "admin.sock"), withFiles, w, progress, t)
	}
	fromServer, err := store.BackupFile(ctx, data, out, withFiles, live, progress)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("backup not finished within --timeout %s; nothing was written to %s; run it again with a longer --timeout, or with none (no limit)", timeout, out)
		}
		return err
	}
	via := "data directory (no server running)"
	if fromServer {
		via = "running server"
	}
	fmt.Fprintf(stdout, "backup written to %s (from the %s)\n", out, via)
	return nil
}

// grow writes a synthetic history into a new data directory for the growth
// benchmark (docs/performance.md, Growth).
func grow(ctx context.Context, data string, opts store.GrowOptions, stdout, stderr io.Writer) error {
	if _, err := os.Stat(filepath.Join(data, "folio.db")); err == nil {
		return fmt.Errorf("grow writes a new data directory; %s already holds a database", data)
	}
	if err := store.PrivateDir(data); err != nil {
		return err
	}
	db, err := store.Open(ctx, filepath.Join(data, "folio.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	opts.Progress = func(n int) { fmt.Fprintf(stderr, "\r%d of %d jobs", n, opts.Jobs) }
	res, err := store.Grow(ctx, db, opts)
	fmt.Fprintln(stderr)
	if err != nil {
		return err
	}
	if err := store.SaveGrowResult(filepath.Join(data, store.GrowResultFile), res); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "grew %s in %.1f s: %v\n", data, res.Seconds, res.Counts)
	return nil
}

// migrateInstall copies a stopped embedded install into PostgreSQL and S3
// and verifies the copy (docs/deploy.md, Moving an embedded install). It
// can be run again: an interrupted copy goes on, a complete one is
// verified and nothing is copied.
func migrateInstall(ctx context.Context, data, toDB, toFiles string, stdout, stderr io.Writer) error {
	if toDB == "" {
		return fmt.Errorf("migrate: --to-database-url is required (postgres://...)")
	}
	r, err := transfer.Run(ctx, transfer.Options{Data: data, DatabaseURL: toDB, FilesURL: toFiles, Log: stderr})
	if r != nil {
		transfer.WriteReport(stdout, r)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "the copy of %s is complete and verified\n", data)
	return nil
}

// adminErr shows an app error's message without its code prefix noise.
func adminErr(err error) error {
	var e *app.Error
	if errors.As(err, &e) {
		return fmt.Errorf("%s (%s)", e.Message, e.Code)
	}
	return err
}

// engineFonts is the embedded font set plus the operator's fonts
// (--font-dir, --system-fonts), indexed now and read on first use.
func (c *Config) engineFonts(log *slog.Logger) render.Fonts {
	fonts := EngineFonts()
	dirs := append([]string(nil), c.FontDirs.list...)
	if c.SystemFonts {
		dirs = append(dirs, app.SystemFontDirs()...)
	}
	if len(dirs) == 0 {
		return fonts
	}
	var taken []string
	for _, f := range fonts.Families {
		taken = append(taken, f.Name)
	}
	fonts.Families = append(fonts.Families, app.OperatorFonts(dirs, taken, log)...)
	return fonts
}

// EngineFonts converts the embedded font set for the render engine.
func EngineFonts() render.Fonts {
	set := assets.Fonts()
	conv := func(list []assets.FontFamily) []render.FontFamily {
		out := make([]render.FontFamily, len(list))
		for i, f := range list {
			out[i].Name = f.Name
			for s, file := range []*assets.FontFile{f.Regular, f.Bold, f.Italic, f.BoldItalic} {
				if file != nil {
					out[i].Lazy[s] = &render.FontFile{Name: file.Name, Coverage: file.Coverage, Load: file.Bytes}
				}
			}
		}
		return out
	}
	return render.Fonts{Families: conv(set.Families), Fallbacks: conv(set.Fallbacks)}
}

// newImageFetcher builds the fetcher of image URLs: public addresses only
// unless --image-url-allow-private, trusting --image-url-ca besides the
// system roots.
func newImageFetcher(c *Config) (*app.ImageFetcher, error) {
	var ca []byte
	if c.ImageURLCA != "" {
		var err error
		if ca, err = os.ReadFile(c.ImageURLCA); err != nil {
			return nil, fmt.Errorf("--image-url-ca: %w", err)
		}
	}
	f, err := app.NewImageFetcher(c.ImageURLAllowPrivate, ca)
	if err != nil {
		return nil, err
	}
	if c.ImageURLTimeout > 0 {
		f.Timeout = c.ImageURLTimeout
	}
	return f, nil
}

// flightRecorder keeps the last seconds of the process's execution trace
// in memory (runtime/trace's flight recorder); save(n) writes them to
// dir/slow-step-n.trace in the background and returns the file's name,
// for the first 20 slow steps, one at a time (`go tool trace` reads it:
// whether a slow step's goroutine ran, waited for a CPU or sat in a system
// call, and what else ran meanwhile).
func flightRecorder(dir string, stderr io.Writer) (save func(n int) string, stop func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: 3 * time.Second, MaxBytes: 64 << 20})
	if err := fr.Start(); err != nil {
		return nil, nil, err
	}
	var busy atomic.Bool
	var wg sync.WaitGroup
	save = func(n int) string {
		if n >= 20 || !busy.CompareAndSwap(false, true) {
			return ""
		}
		name := filepath.Join(dir, fmt.Sprintf("slow-step-%d.trace", n))
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer busy.Store(false)
			time.Sleep(100 * time.Millisecond) // the step's end and what follows it
			f, err := os.Create(name)
			if err == nil {
				_, err = fr.WriteTo(f)
				err = errors.Join(err, f.Close())
			}
			if err != nil {
				fmt.Fprintf(stderr, "trace of a slow step: %v\n", err)
			}
		}()
		return name
	}
	return save, func() { wg.Wait(); fr.Stop() }, nil
}
