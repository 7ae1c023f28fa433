package main

import (
	"strings"
	"testing"
)

// TestCountsReadAsEnglish: a count of one takes the singular, in the
// dashboard and in the API's messages ("1 API keys" and "1 members" were
// what the free plan showed).
func TestCountsReadAsEnglish(t *testing.T) {
	s := startServer(t, func(c *Config) { c.DefaultPlan = "free" })
	u := s.signup("Counter")
	s.createKey(u.token, nil)
	r := s.do("POST", "/api/api-keys", u.token, map[string]any{"name": "second"})
	s.wantError(r, 400, "ERR_PLAN_002")
	if msg := r.str("message"); msg != "the free plan allows 1 API key; delete one or change plan" {
		t.Errorf("plan limit message %q", msg)
	}

	c := dashClient(t, s)
	c.login(u)
	usage := c.page("/app/usage")
	for _, want := range []string{"2 templates", "1 API key<", "1 member ·", "50 documents a month", "batches of 10 documents"} {
		if !strings.Contains(usage, want) {
			t.Errorf("usage page lacks %q", want)
		}
	}
	for _, page := range []string{"/app/usage", "/app/", "/app/team", "/app/account"} {
		html := c.page(page)
		for _, wrong := range []string{"1 API keys", "1 members", "1 templates", "1 credits", "1 documents", "1 backup codes", " 1 webhook deliveries"} {
			if strings.Contains(html, wrong) {
				t.Errorf("%s says %q", page, wrong)
			}
		}
	}
}
