package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"folio/internal/pgtest"
	"folio/store/postgres"
)

// lockedBuffer is a log sink several goroutines write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSharedStateAcrossServers: two servers, each with its own DB handle
// on one PostgreSQL database for what replicas share (rate-limit windows
// and login throttles, keys, the janitor's task), answer over HTTPS as
// one: a client's per-IP budget of 30 is 30 across both, the login
// throttle of an email counts attempts on both, the keys are not files in
// --data, and of the two janitors that tick at start one runs the pass.
func TestSharedStateAcrossServers(t *testing.T) {
	url := pgtest.NewDatabase(t)
	file := rateFile(t, `{"unauthenticated": 30}`)
	var servers []*testServer
	var logs []*lockedBuffer
	for range 2 {
		db, err := postgres.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		buf := &lockedBuffer{}
		m := &Main{RateWindows: db, Secrets: db, Tasks: db, Logger: slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		servers = append(servers, startMain(t, m, func(c *Config) { c.RateLimits = file }))
		logs = append(logs, buf)
	}
	// Ten wrong passwords for one email, in turn on each server; the
	// eleventh is throttled wherever it goes.
	for i := 1; i <= 11; i++ {
		s := servers[i%2]
		r := s.do("POST", "/api/auth/login", "", map[string]string{"email": "victim@example.com", "password": "guess " + strconv.Itoa(i)})
		if i <= 10 {
			s.wantError(r, 401, "ERR_AUTH_001")
		} else {
			s.wantError(r, 429, "ERR_QUOTA_003")
		}
	}
	// Those 11 calls came from this client's IP, whose budget without
	// authentication is 30 for the two servers together.
	for i := 12; i <= 31; i++ {
		s := servers[i%2]
		r := s.do("GET", "/api/v1/templates", "", nil)
		if i <= 30 {
			s.wantError(r, 401, "ERR_AUTH_003")
			if got := r.header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(30-i) {
				t.Fatalf("call %d on server %d: X-RateLimit-Remaining %s, want %d", i, i%2, got, 30-i)
			}
		} else {
			s.wantError(r, 429, "ERR_QUOTA_003")
		}
	}
	for _, s := range servers {
		if _, err := os.Stat(filepath.Join(s.Config.Data, "keys")); !os.IsNotExist(err) {
			t.Fatalf("keys written to %s: %v", s.Config.Data, err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		all := logs[0].String() + logs[1].String()
		if strings.Count(all, "janitor pass") == 1 && strings.Count(all, "janitor: skipped") == 1 {
			break
		}
		if time.Now().After(deadline) || strings.Count(all, "janitor pass") > 1 {
			t.Fatalf("janitor logs:\n%s", all)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAdminWithDatabaseURL: folio admin backup with --database-url (or
// FOLIO_DATABASE_URL) says to use pg_dump rather than copying a local
// SQLite the servers do not use, and the other admin commands refuse
// rather than write there.
func TestAdminWithDatabaseURL(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	url := "postgres://folio@127.0.0.1:1/folio"
	code, _, errOut := runCLI(t, "admin", "backup", "--data", data, "--out", filepath.Join(t.TempDir(), "b.tar.gz"), "--database-url", url)
	if code != 1 || !strings.Contains(errOut, "pg_dump --format=custom") || !strings.Contains(errOut, "docs/deploy.md, Backups") {
		t.Fatalf("backup: exit %d, stderr %q", code, errOut)
	}
	t.Setenv("FOLIO_DATABASE_URL", url)
	code, _, errOut = runCLI(t, "admin", "set-plan", "--data", data, "--team", "t", "--plan", "pro")
	if code != 1 || !strings.Contains(errOut, "set-plan: works on an embedded install's --data only") {
		t.Fatalf("set-plan: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("--data was created: %v", err)
	}
}
