package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// wantPlanLimit asserts ERR_PLAN_002 with its relatedInfo.
func (s *testServer) wantPlanLimit(r resp, resource, plan string, limit int) {
	s.t.Helper()
	s.wantError(r, 400, "ERR_PLAN_002")
	if r.str("relatedInfo.resource") != resource || r.str("relatedInfo.plan") != plan ||
		r.str("relatedInfo.limit") != fmt.Sprint(limit) || r.str("relatedInfo.current") != fmt.Sprint(limit) {
		s.t.Fatalf("relatedInfo = %s", r.raw)
	}
}

// TestTemplatePlanLimit: the free plan's third template is refused, whether
// created, duplicated or imported; deleting one frees the place.
func TestTemplatePlanLimit(t *testing.T) {
	s := startServer(t, func(c *Config) { c.DefaultPlan = "free" }) // 2 templates
	u := s.signup("Frugal")
	first := s.createTemplate(u.token, "One", invoiceTemplate)
	s.createTemplate(u.token, "Two", invoiceTemplate)
	body := map[string]any{}
	for k, v := range invoiceTemplate {
		body[k] = v
	}
	body["name"] = "Three"
	s.wantPlanLimit(s.do("POST", "/api/templates", u.token, body), "templates", "free", 2)
	s.wantPlanLimit(s.do("POST", "/api/templates/"+first.str("id")+"/duplicate", u.token, nil), "templates", "free", 2)
	export := s.must(200, "GET", "/api/templates/"+first.str("id")+"/export", u.token, nil)
	s.wantPlanLimit(s.upload("/api/templates/import", u.token, export.raw, nil), "templates", "free", 2)
	if l := s.must(200, "GET", "/api/templates", u.token, nil); l.str("pagination.total") != "2" && l.str("meta.total") != "2" {
		t.Fatalf("templates after refusals: %s", l.raw)
	}

	s.must(200, "DELETE", "/api/templates/"+first.str("id"), u.token, nil)
	s.must(200, "POST", "/api/templates", u.token, body)
}

// TestPlanCountsUnderConcurrency: the plan's count is checked in the
// transaction that inserts, so of many simultaneous creates exactly as many
// pass as the plan has room for.
func TestPlanCountsUnderConcurrency(t *testing.T) {
	// race sends n requests at once, over connections opened beforehand.
	race := func(s *testServer, n int, do func(s *testServer, i int) resp) map[string]int {
		tr := s.client.Transport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = n
		c := *s
		c.client = &http.Client{Transport: tr}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() { defer wg.Done(); c.do("GET", "/healthz", "", nil) }()
		}
		wg.Wait()
		got := map[string]int{}
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r := do(&c, i)
				mu.Lock()
				got[fmt.Sprint(r.status, r.str("code"))]++
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		return got
	}

	free := startServer(t, func(c *Config) { c.DefaultPlan = "free" }) // 2 templates, 1 key
	u := free.signup("Racer")
	got := race(free, 12, func(free *testServer, i int) resp {
		body := map[string]any{}
		for k, v := range invoiceTemplate {
			body[k] = v
		}
		body["name"] = fmt.Sprintf("Template %d", i)
		return free.do("POST", "/api/templates", u.token, body)
	})
	if got["200"] != 2 || got["400ERR_PLAN_002"] != 10 {
		t.Fatalf("12 concurrent templates on free (2): %v", got)
	}
	got = race(free, 12, func(free *testServer, i int) resp {
		return free.do("POST", "/api/api-keys", u.token, map[string]any{"name": fmt.Sprintf("key %d", i)})
	})
	if got["200"] != 1 || got["400ERR_PLAN_002"] != 11 {
		t.Fatalf("12 concurrent keys on free (1): %v", got)
	}

	starter := startServer(t, func(c *Config) { c.DefaultPlan = "starter" }) // 3 members, pending invitations included
	owner := starter.verifiedUser("Owner")
	team := starter.newTeam(owner, "Crowd")
	got = race(starter, 12, func(starter *testServer, i int) resp {
		return starter.do("POST", "/api/teams/members/invite", owner.token, map[string]any{"email": fmt.Sprintf("guest%d@example.com", i)}, "X-Team-Id", team)
	})
	if got["200"] != 2 || got["400ERR_PLAN_002"] != 10 {
		t.Fatalf("12 concurrent invitations on starter (owner + 2): %v", got)
	}
}

// TestUnlimitedPlanIsTheSelfHostedDefault: a team on the default plan of
// a self-hosted install (unlimited) meets none of the spec's caps: a third
// template, a second key and member invitations go through, documents are
// counted but never refused, and the wallet says there is no quota. The
// spec's plans keep their caps (TestTemplatePlanLimit and the others).
func TestUnlimitedPlanIsTheSelfHostedDefault(t *testing.T) {
	s := startServer(t, func(c *Config) { c.DefaultPlan = "unlimited" })
	u := s.verifiedUser("Selfhost")
	for i := range 3 {
		s.createTemplate(u.token, fmt.Sprintf("T%d", i), invoiceTemplate)
	}
	key := s.createKey(u.token, nil)
	s.createKey(u.token, nil)
	w := s.must(200, "GET", "/api/dashboard/analytics/wallet", u.token, nil)
	if w.str("plan") != "unlimited" || w.get("quota.unlimited") != true || num(w, "limits.documentsPerMonth") != 0 {
		t.Fatalf("wallet: %s", w.raw)
	}
	tpl := s.must(200, "GET", "/api/templates", u.token, nil).get("data").([]any)[0].(map[string]any)["id"].(string)
	docs := make([]any, 60)
	for i := range docs {
		docs[i] = map[string]any{"variables": map[string]any{"number": fmt.Sprint(i), "customer": "c"}}
	}
	// 60 documents: more than the free plan's 50 a month, in one batch.
	b := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl, "format": "pdf", "documents": docs})
	if done := s.waitBatch(key, b.str("batchId")); done.str("completedDocuments") != "60" {
		t.Fatalf("batch: %s", done.raw)
	}
	if w := s.must(200, "GET", "/api/dashboard/analytics/wallet", u.token, nil); num(w, "quota.used") != 60 {
		t.Fatalf("documents are counted: %s", w.raw)
	}
	c := dashClient(t, s)
	c.login(u)
	page := c.page("/app/usage")
	if got := elementText(t, page, "quota"); !strings.Contains(got, "60 / no limit") {
		t.Errorf("#quota says %q", got)
	}
	// Credits are not what documents wait for here: "0 documents available"
	// would say the opposite of the plan.
	if got := elementText(t, page, "credits"); !strings.Contains(got, "Not needed on this plan") || strings.Contains(got, "available in all") {
		t.Errorf("#credits says %q", got)
	}
	if got := elementText(t, page, "plan"); !strings.Contains(got, "Plan: unlimited") || !strings.Contains(got, "no monthly quota") ||
		!strings.Contains(got, "folio admin set-plan") {
		t.Errorf("#plan says %q: it should show the plan and how an operator changes it", got)
	}
}
