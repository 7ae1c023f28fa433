package main

import (
	"net/url"
	"strings"
	"testing"
)

// TestDashboardNewTemplateName: the name field's placeholder reads as an
// example, the browser does not validate the form (its bubble vanishes and
// says nothing of the team), and the server's message shows on the page by
// the field, with the choice of example kept.
func TestDashboardNewTemplateName(t *testing.T) {
	s := startServer(t)
	u := s.signup("Namer")
	c := dashClient(t, s)
	c.login(u)
	page := c.page("/app/templates/new")
	for _, want := range []string{`placeholder="e.g. Invoice for ACME"`, `id="new-template-form" novalidate`, `id="template-name" value=""`} {
		if !strings.Contains(page, want) {
			t.Fatalf("new template page lacks %s", want)
		}
	}
	res := c.post("/app/templates", url.Values{"csrf": {c.csrf()}, "example": {"monthly-report"}, "name": {"  "}})
	body := readBody(res)
	if res.StatusCode != 400 || !strings.Contains(body, `id="name-error">Give the template a name`) || !strings.Contains(body, `aria-invalid="true"`) ||
		!strings.Contains(body, `value="monthly-report" checked`) {
		t.Fatalf("empty name: %d\n%s", res.StatusCode, body)
	}
	if res := c.post("/app/templates", url.Values{"csrf": {c.csrf()}, "example": {"invoice"}, "name": {"Invoice"}}); res.StatusCode != 303 {
		t.Fatalf("create: %d", res.StatusCode)
	}
	res = c.post("/app/templates", url.Values{"csrf": {c.csrf()}, "example": {"invoice"}, "name": {"Invoice"}})
	if body := readBody(res); res.StatusCode != 400 || !strings.Contains(body, "“Invoice” is taken in this team") || !strings.Contains(body, `value="Invoice"`) {
		t.Fatalf("taken name: %d\n%s", res.StatusCode, body)
	}
}
