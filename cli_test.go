package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, "folio dev") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, _, errOut := runCLI(t, "frobnicate"); code != 1 || !strings.Contains(errOut, "unknown command") {
		t.Fatalf("unknown command: %d %q", code, errOut)
	}
}

func TestPlainHTTPFails(t *testing.T) {
	s := startServer(t)
	res, err := http.Get("http://" + strings.TrimPrefix(s.URL(), "https://") + "/api/users/me")
	if err == nil {
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == 200 || !strings.Contains(string(body), "HTTPS") {
			t.Fatalf("plain HTTP answered %d %q", res.StatusCode, body)
		}
	}
}

func TestSelfSignedCertificateIsReused(t *testing.T) {
	data := t.TempDir()
	s1 := startServerIn(t, data)
	first, err := os.ReadFile(filepath.Join(data, "tls", "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	s1.Close()
	s2 := startServerIn(t, data)
	second, _ := os.ReadFile(filepath.Join(data, "tls", "cert.pem"))
	if !bytes.Equal(first, second) {
		t.Fatal("certificate was regenerated on restart")
	}
	s2.must(404, "GET", "/nothing", "", nil) // and it serves with it
}

func TestConfigFromEnvironment(t *testing.T) {
	t.Setenv("FOLIO_SIGNUP", "closed")
	t.Setenv("FOLIO_WORKERS", "3")
	var c Config
	fs := newFlagSet()
	c.flags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if c.Signup != "closed" || c.Workers != 3 || c.Addr != "127.0.0.1:8443" || c.Data != "./folio-data" || c.DefaultPlan != "unlimited" {
		t.Fatalf("config = %+v", c)
	}
	fs = newFlagSet()
	c.flags(fs)
	fs.Parse([]string{"--signup", "open"})
	if c.Signup != "open" {
		t.Fatal("flag does not override the environment")
	}
	bad := Config{DefaultPlan: "platinum", Signup: "open", LogFormat: "text"}
	if err := bad.validate(); err == nil || !strings.Contains(err.Error(), "platinum") {
		t.Fatalf("bad plan accepted: %v", err)
	}
}

// TestAdminCommandsBesideRunningServer runs the operator commands against the
// data directory of a serving instance.
func TestAdminCommandsBesideRunningServer(t *testing.T) {
	s := startServer(t)
	data := s.Config.Data

	code, out, errOut := runCLI(t, "admin", "create-user", "--data", data, "--email", "ops@example.com", "--password", "operator pw", "--name", "Ops")
	if code != 0 || !strings.Contains(out, "created user usr_") {
		t.Fatalf("create-user: %d %q %q", code, out, errOut)
	}
	login := s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": "ops@example.com", "password": "operator pw"})
	if login.str("user.emailVerified") != "false" {
		t.Fatalf("created user: %s", login.raw)
	}
	if code, _, errOut := runCLI(t, "admin", "create-user", "--data", data, "--email", "ops@example.com", "--password", "operator pw", "--name", "Ops"); code != 1 || !strings.Contains(errOut, "ERR_USER_002") {
		t.Fatalf("duplicate create-user: %d %q", code, errOut)
	}

	if code, _, errOut := runCLI(t, "admin", "verify-email", "--data", data, "--email", "ops@example.com"); code != 0 {
		t.Fatalf("verify-email: %q", errOut)
	}
	if me := s.must(200, "GET", "/api/users/me", login.str("accessToken"), nil); me.str("emailVerified") != "true" {
		t.Fatalf("after verify-email: %s", me.raw)
	}

	teamID := s.must(200, "POST", "/api/api-keys", login.str("accessToken"), map[string]any{"name": "k"}).str("teamId")
	if code, out, errOut := runCLI(t, "admin", "set-plan", "--data", data, "--team", teamID, "--plan", "growth"); code != 0 || !strings.Contains(out, "growth") {
		t.Fatalf("set-plan: %q %q", out, errOut)
	}
	if code, out, errOut := runCLI(t, "admin", "add-credits", "--data", data, "--team", teamID, "--documents", "500"); code != 0 || !strings.Contains(out, "500 credits") {
		t.Fatalf("add-credits: %q %q", out, errOut)
	}
	team, err := s.DB.FindTeam(context.Background(), teamID)
	if err != nil || team.Plan != "growth" || team.Credits != 500 {
		t.Fatalf("team after admin: %+v %v", team, err)
	}
	// Mistakes exit 1, change nothing, and say what is wrong.
	empty := t.TempDir()
	for _, bad := range []struct {
		args []string
		want string // the whole of stderr
	}{
		{[]string{"set-plan", "--data", data, "--team", teamID, "--plan", "gold"}, `unknown plan "gold" (free, starter, growth, scale or unlimited) (ERR_PLAN_001)`},
		{[]string{"set-plan", "--data", data, "--team", "team_nope", "--plan", "free"}, `no team with id or slug "team_nope" (ERR_TEAM_001)`},
		{[]string{"set-plan", "--data", data, "--plan", "free"}, `team (its id or slug) is required (ERR_VALID_005)`},
		{[]string{"add-credits", "--data", data, "--team", "no-such-slug", "--documents", "5"}, `no team with id or slug "no-such-slug" (ERR_TEAM_001)`},
		{[]string{"add-credits", "--data", data, "--team", teamID, "--documents", "-5"}, `documents must be a positive number (ERR_VALID_003)`},
		{[]string{"verify-email", "--data", data, "--email", "ghost@example.com"}, `no user with email "ghost@example.com" (ERR_USER_001)`},
		{[]string{"set-plan", "--data", empty, "--team", teamID, "--plan", "free"}, "no Folio database in " + empty + " (--data)"},
		{[]string{"explode", "--data", data}, `unknown admin command "explode" (create-user, verify-email, set-plan, add-credits, backup, grow, migrate)`},
	} {
		code, out, errOut := runCLI(t, append([]string{"admin"}, bad.args...)...)
		if code != 1 || out != "" || errOut != "folio: "+bad.want+"\n" {
			t.Errorf("admin %v: exit %d, stdout %q, stderr %q; want exit 1 and %q", bad.args, code, out, errOut, bad.want)
		}
	}
	if team, _ := s.DB.FindTeam(context.Background(), teamID); team.Plan != "growth" || team.Credits != 500 {
		t.Fatalf("a refused command changed the team: %+v", team)
	}
}

// TestAdminCreateUserDefaultPlan checks the plan of the personal team that
// folio admin create-user makes, as its owner sees it: free unless
// --default-plan or FOLIO_DEFAULT_PLAN (as for serve) says otherwise.
func TestAdminCreateUserDefaultPlan(t *testing.T) {
	s := startServer(t) // serves with --default-plan scale: create-user must not inherit it
	data := s.Config.Data
	planOf := func(email string) string {
		t.Helper()
		login := s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": email, "password": "operator pw"})
		return s.must(200, "GET", "/api/dashboard/analytics/wallet", login.str("accessToken"), nil).str("plan")
	}
	create := func(email string, extra ...string) (int, string, string) {
		return runCLI(t, append([]string{"admin", "create-user", "--data", data, "--email", email, "--password", "operator pw", "--name", "Ops"}, extra...)...)
	}

	if code, _, errOut := create("plain@example.com"); code != 0 {
		t.Fatalf("create-user: %q", errOut)
	}
	if got := planOf("plain@example.com"); got != "unlimited" {
		t.Errorf("without --default-plan: plan %q, want unlimited", got)
	}
	if code, out, errOut := create("flag@example.com", "--default-plan", "growth"); code != 0 || !strings.Contains(out, "on plan growth") {
		t.Fatalf("create-user --default-plan growth: %q %q", out, errOut)
	}
	if got := planOf("flag@example.com"); got != "growth" {
		t.Errorf("--default-plan growth: plan %q", got)
	}
	t.Setenv("FOLIO_DEFAULT_PLAN", "starter")
	if code, _, errOut := create("env@example.com"); code != 0 {
		t.Fatalf("create-user with FOLIO_DEFAULT_PLAN: %q", errOut)
	}
	if got := planOf("env@example.com"); got != "starter" {
		t.Errorf("FOLIO_DEFAULT_PLAN=starter: plan %q", got)
	}

	if code, _, errOut := create("gold@example.com", "--default-plan", "gold"); code != 1 || !strings.Contains(errOut, "gold") {
		t.Fatalf("--default-plan gold: exit %d, stderr %q", code, errOut)
	}
	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": "gold@example.com", "password": "operator pw"}), 401, "ERR_AUTH_001")
}

// TestAdminSetPlanAndCreditsBySlug names the team by its slug, as an
// operator who only knows the slug would: the plan and credits change on
// that team, as its owner sees them, and on no other.
func TestAdminSetPlanAndCreditsBySlug(t *testing.T) {
	s := startServer(t)
	data := s.Config.Data
	u := s.signup("Owner")
	team := s.must(200, "POST", "/api/teams", u.token, map[string]any{"name": "Acme Corp", "slug": "acme-ops"})
	wallet := func(teamID string) resp { // "": the personal team
		t.Helper()
		if teamID == "" {
			return s.must(200, "GET", "/api/dashboard/analytics/wallet", u.token, nil)
		}
		return s.must(200, "GET", "/api/dashboard/analytics/wallet", u.token, nil, "X-Team-Id", teamID)
	}
	personal := wallet("")
	if before := wallet(team.str("id")); before.str("plan") == "starter" || before.str("credits.remaining") != "0" {
		t.Fatalf("new team already on starter or with credits: %s", before.raw)
	}

	if code, out, errOut := runCLI(t, "admin", "set-plan", "--data", data, "--team", "acme-ops", "--plan", "starter"); code != 0 || !strings.Contains(out, team.str("id")) {
		t.Fatalf("set-plan --team acme-ops: %d %q %q", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "admin", "add-credits", "--data", data, "--team", "acme-ops", "--documents", "70"); code != 0 || !strings.Contains(out, "70 credits") {
		t.Fatalf("add-credits --team acme-ops: %d %q %q", code, out, errOut)
	}
	if w := wallet(team.str("id")); w.str("plan") != "starter" || w.str("credits.remaining") != "70" {
		t.Fatalf("team after set-plan/add-credits by slug: %s", w.raw)
	}
	if w := wallet(""); w.str("plan") != personal.str("plan") || w.str("credits.remaining") != personal.str("credits.remaining") {
		t.Fatalf("personal team changed too: %s, was %s", w.raw, personal.raw)
	}
	for _, bad := range [][]string{
		{"admin", "set-plan", "--data", data, "--team", "acme-nope", "--plan", "growth"},
		{"admin", "add-credits", "--data", data, "--team", "acme-nope", "--documents", "5"},
	} {
		if code, _, errOut := runCLI(t, bad...); code != 1 || !strings.Contains(errOut, "ERR_TEAM_001") {
			t.Fatalf("%v: exit %d, stderr %q", bad, code, errOut)
		}
	}
}
