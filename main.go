// Command folio is a self-hosted document generation service: one binary
// serving an HTTPS JSON API that renders PDF and XLSX documents from stored
// templates. This file only wires the parts together.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"folio/app"
	"folio/assets"
	"folio/render"
	"folio/store"
	"folio/web"
)

// Set by -ldflags "-X main.version=... -X main.commit=... -X main.date=...".
var (
	version = "dev"
	commit  = "none"
	date    = "unknown"
)

func main() {
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
	case "version":
		fmt.Fprintf(stdout, "folio %s (commit %s, built %s, %s)\n", version, commit, date, runtime.Version())
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, "usage: folio [serve|admin|version] [flags]   (folio <command> -h for flags)")
	default:
		err = fmt.Errorf("unknown command %q (serve, admin, version)", cmd)
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "folio:", err)
		return 1
	}
	return 0
}

// Config is the serve configuration (DESIGN.md section 2).
type Config struct {
	Addr, Data, BaseURL, TLSCert, TLSKey string
	Workers                              int
	DefaultPlan, Signup, SMTPURL         string
	WebhookRetrySchedule, WebhookCA      string
	WebhookAllowPrivate                  bool
	RateLimits, LogFormat                string
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
	fs.StringVar(&c.DefaultPlan, "default-plan", "free", "plan of a new team: free, starter, growth or scale")
	fs.StringVar(&c.Signup, "signup", "open", "open or closed (closed: only folio admin create-user)")
	fs.StringVar(&c.SMTPURL, "smtp-url", "", "smtp://user:pass@host:port (default: mail written to <data>/mail)")
	fs.StringVar(&c.WebhookRetrySchedule, "webhook-retry-schedule", "0s,1m,5m,30m", "delays of webhook attempts")
	fs.BoolVar(&c.WebhookAllowPrivate, "webhook-allow-private", false, "allow webhook URLs on loopback/private addresses")
	fs.StringVar(&c.WebhookCA, "webhook-ca", "", "extra PEM CA bundle trusted for webhook TLS")
	fs.StringVar(&c.RateLimits, "rate-limits", "", "JSON file replacing the rate-limit table, or off")
	fs.StringVar(&c.LogFormat, "log-format", "text", "text or json")
	envDefaults(fs)
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
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("--log-format must be text or json")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if c.BaseURL != "" {
		if u, err := url.Parse(c.BaseURL); err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("--base-url must be an https:// URL")
		}
	}
	return nil
}

// Main is a running Folio server.
type Main struct {
	Config Config
	Logger *slog.Logger
	Now    func() time.Time

	DB     *store.DB
	Bolt   *store.Bolt
	Server *web.Server
	Certs  *web.Certs

	ln          net.Listener
	stopWorkers func()
	stopJanitor func()
	served      chan error
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
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	if err := os.MkdirAll(c.Data, 0o750); err != nil {
		return err
	}
	if m.DB, err = store.Open(ctx, filepath.Join(c.Data, "folio.db")); err != nil {
		return err
	}
	if m.Bolt, err = store.OpenBolt(filepath.Join(c.Data, "queue.db")); err != nil {
		return err
	}
	if m.ln, err = net.Listen("tcp", c.Addr); err != nil {
		return err
	}
	if c.BaseURL == "" {
		c.BaseURL = "https://" + m.ln.Addr().String()
	}
	if err := m.openCerts(); err != nil {
		return err
	}
	jwtKey, err := store.Secret(filepath.Join(c.Data, "keys", "jwt.key"))
	if err != nil {
		return err
	}
	dlKey, err := store.Secret(filepath.Join(c.Data, "keys", "download.key"))
	if err != nil {
		return err
	}
	mailer, err := newMailer(c, m.Now)
	if err != nil {
		return err
	}
	engine, err := render.NewEngine(render.Fonts(assets.Fonts()))
	if err != nil {
		return err
	}
	templates := &app.TemplateService{Templates: m.DB, Teams: m.DB, Engine: engine, Now: m.Now}
	docs := &app.DocumentService{
		Jobs: m.DB, Batches: m.DB, Templates: templates, Teams: m.DB, Queue: m.Bolt, Files: &store.Files{Root: filepath.Join(c.Data, "files")},
		Downloads: app.Downloads{Key: dlKey, BaseURL: c.BaseURL}, Logger: m.Logger, Now: m.Now,
	}
	m.Server = &web.Server{
		Auth: &app.AuthService{Users: m.DB, Teams: m.DB, Tokens: m.DB, Keys: m.DB, Mailer: mailer, Limiter: app.NewMemoryLimiter(),
			Config: app.AuthConfig{JWTKey: jwtKey, BaseURL: c.BaseURL, SignupOpen: c.Signup == "open", DefaultPlan: c.DefaultPlan}, Now: m.Now},
		Keys:      &app.KeyService{Keys: m.DB, Teams: m.DB, Now: m.Now},
		Templates: templates,
		Documents: docs,
		Analytics: &app.AnalyticsService{Store: m.DB, Templates: m.DB, Teams: m.DB, Now: m.Now},
		Logger:    m.Logger,
	}
	if m.stopWorkers, err = docs.Start(ctx, c.Workers); err != nil {
		return err
	}
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	janitorDone := make(chan struct{})
	m.stopJanitor = func() { cancel(); <-janitorDone }
	go func() {
		defer close(janitorDone)
		app.RunJanitor(jctx, m.Logger, 10*time.Minute, docs.Sweep)
	}()
	m.served = make(chan error, 1)
	go func() { m.served <- m.Server.Serve(m.ln, m.Certs.Get) }()
	m.Logger.Info("folio serving", "url", c.BaseURL, "data", c.Data, "workers", c.Workers, "version", version)
	return nil
}

func (m *Main) openCerts() error {
	c := &m.Config
	cert, key := c.TLSCert, c.TLSKey
	if cert == "" {
		host, _, _ := net.SplitHostPort(m.ln.Addr().String())
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

// Close stops serving (finishing in-flight requests for up to 30 s), stops
// the workers (running jobs finish; queued ones stay queued) and closes the stores.
func (m *Main) Close() error {
	var errs []error
	if m.Server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		errs = append(errs, m.Server.Shutdown(ctx))
		cancel()
	} else if m.ln != nil {
		m.ln.Close()
	}
	if m.stopJanitor != nil {
		m.stopJanitor()
	}
	if m.stopWorkers != nil {
		m.stopWorkers()
	}
	if m.Bolt != nil {
		errs = append(errs, m.Bolt.Close())
	}
	if m.DB != nil {
		errs = append(errs, m.DB.Close())
	}
	return errors.Join(errs...)
}

// URL is the base URL the server answers on.
func (m *Main) URL() string { return m.Config.BaseURL }

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet()
	fs.SetOutput(stderr)
	m := &Main{}
	m.Config.flags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := m.Open(ctx); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		m.Logger.Info("shutting down")
	case err := <-m.served:
		if err != nil {
			m.Close()
			return err
		}
	}
	return m.Close()
}

func newFlagSet() *flag.FlagSet { return flag.NewFlagSet("serve", flag.ContinueOnError) }

// admin runs operator commands. They touch only SQLite (the server holds the
// bbolt file), so they are safe beside a running server.
func admin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: folio admin create-user|verify-email|set-plan|add-credits [flags]")
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("admin "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "./folio-data", "data directory")
	email := fs.String("email", "", "user email")
	password := fs.String("password", "", "user password (min 8 characters)")
	name := fs.String("name", "", "user name")
	verified := fs.Bool("verified", false, "mark the email verified")
	team := fs.String("team", "", "team id or slug")
	plan := fs.String("plan", "", "free, starter, growth or scale")
	docs := fs.Int64("documents", 0, "number of document credits")
	envDefaults(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(*data, "folio.db")); err != nil && cmd != "create-user" {
		return fmt.Errorf("no Folio database in %s (--data)", *data)
	}
	if err := os.MkdirAll(*data, 0o750); err != nil {
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
			Config: app.AuthConfig{DefaultPlan: "free"}, Now: time.Now}
		u, err := auth.CreateUser(ctx, app.CreateUserInput{SignupInput: app.SignupInput{Email: *email, Password: *password, Name: *name}, Verified: *verified})
		if err != nil {
			return adminErr(err)
		}
		fmt.Fprintf(stdout, "created user %s <%s> with personal team %s\n", u.ID, u.Email, u.PersonalTeamID)
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
		return fmt.Errorf("unknown admin command %q (create-user, verify-email, set-plan, add-credits)", cmd)
	}
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
