package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"folio/app"
	"folio/web"
)

// observed holds every route pattern ("METHOD /path") and status that an
// in-process test server answered, gathered from each server's request
// metrics when it closes (startMain). The server records the pattern its
// router matched, so every client counts: the test helpers, web/client, the
// dashboard's browser and raw http.Clients alike.
var observed = struct {
	sync.Mutex
	statuses map[string]map[int]bool
}{statuses: map[string]map[int]bool{}}

// recordStatuses adds what m counted to observed.
func recordStatuses(m *app.Metrics) {
	observed.Lock()
	defer observed.Unlock()
	m.EachRequest(func(route string, status int) {
		if observed.statuses[route] == nil {
			observed.statuses[route] = map[int]bool{}
		}
		observed.statuses[route][status] = true
	})
}

// fullRun reports whether this test binary ran every test: no -run or
// -skip filter. Only then is observed worth comparing with the document
// (and does every operation have to appear in it).
func fullRun() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

// checkObservedStatuses runs after a full, passing run (TestMain): it
// prints what web/openapi.json fails to declare and returns the exit code.
// Without -short every documented operation must also have been called
// (TestOpenAPIExamples calls each), which shows the recording works.
func checkObservedStatuses(w io.Writer) int {
	observed.Lock()
	defer observed.Unlock()
	problems, err := undeclaredStatuses(web.OpenAPI, observed.statuses, !testing.Short())
	if err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) == 0 {
		return 0
	}
	fmt.Fprintf(w, "FAIL: web/openapi.json does not declare what the tests saw (%d):\n  %s\n"+
		"Declare each status under the operation's responses (docs/api.md, The OpenAPI document).\n",
		len(problems), strings.Join(problems, "\n  "))
	return 1
}

// undeclaredStatuses compares the observed statuses with the OpenAPI
// document: every status an operation answered must be one of its declared
// responses (by code: "default" and "4XX" ranges do not count), and every
// /api/ route answered must be in the document. Paths outside /api/ that the
// document does not describe (the dashboard, static files) are not checked.
// With all, every documented operation must also have been called.
func undeclaredStatuses(doc []byte, statuses map[string]map[int]bool, all bool) ([]string, error) {
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("web/openapi.json: %v", err)
	}
	type operation struct {
		Responses map[string]json.RawMessage `json:"responses"`
	}
	ops := map[string]operation{} // "METHOD /path"
	for path, item := range d.Paths {
		for method, raw := range item {
			switch method {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
			default:
				continue // parameters, summary, ...
			}
			var op operation
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("web/openapi.json: %s %s: %v", method, path, err)
			}
			ops[strings.ToUpper(method)+" "+path] = op
		}
	}
	var problems []string
	seen := map[string]bool{}
	for route, codes := range statuses {
		if route == "unmatched" {
			continue // no route: the 404 envelope, not an operation
		}
		_, path, _ := strings.Cut(route, " ")
		if _, ok := d.Paths[path]; !ok {
			if strings.HasPrefix(path, "/api/") {
				problems = append(problems, route+": answered, but the path is not in the document")
			}
			continue
		}
		op, ok := ops[route]
		if !ok {
			problems = append(problems, route+": answered, but the operation is not in the document")
			continue
		}
		seen[route] = true
		var missing []string
		for code := range codes {
			if _, ok := op.Responses[strconv.Itoa(code)]; !ok {
				missing = append(missing, strconv.Itoa(code))
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			problems = append(problems, route+": answered "+strings.Join(missing, ", ")+", not declared")
		}
	}
	if all {
		for route := range ops {
			if !seen[route] {
				problems = append(problems, route+": documented, but no test called it")
			}
		}
	}
	sort.Strings(problems)
	return problems, nil
}

// TestUndeclaredStatuses checks the comparison TestMain makes after a full
// run, on a small document.
func TestUndeclaredStatuses(t *testing.T) {
	doc := []byte(`{"paths": {
		"/api/things/{id}": {"parameters": [], "get": {"responses": {"200": {}, "404": {}, "default": {}}}},
		"/api/other": {"post": {"responses": {"200": {}, "4XX": {}}}},
		"/healthz": {"get": {"responses": {"200": {}}}}}}`)
	got, err := undeclaredStatuses(doc, map[string]map[int]bool{
		"GET /api/things/{id}": {200: true, 404: true, 500: true, 401: true}, // "default" covers nothing
		"POST /api/other":      {200: true, 400: true},                       // nor does a range
		"DELETE /api/other":    {204: true},
		"GET /api/missing":     {200: true},
		"GET /app/templates":   {200: true, 500: true}, // the dashboard: not in the document by design
		"unmatched":            {404: true},
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"DELETE /api/other: answered, but the operation is not in the document",
		"GET /api/missing: answered, but the path is not in the document",
		"GET /api/things/{id}: answered 401, 500, not declared",
		"GET /healthz: documented, but no test called it",
		"POST /api/other: answered 400, not declared",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestOpenAPIStandardResponses checks the statuses every operation of a kind
// can answer, whether or not a test provokes them, so that a new operation
// cannot forget one:
//   - 400 and 500 everywhere: the URL and header limits are checked before
//     routing (ERR_LIMIT_011, ERR_LIMIT_012) and any handler can fail;
//   - 429 everywhere but the probes and the operator endpoints, which are
//     never rate limited;
//   - 401 and 403 where a bearer token is needed;
//   - the X-Team-Id parameter and 404 where a JWT is accepted: every JWT call
//     checks the caller's membership of that team (ERR_TEAM_001);
//   - 404 where the path names a record;
//   - codes only: a "default" or "4XX" response declares nothing.
func TestOpenAPIStandardResponses(t *testing.T) {
	doc := loadOpenAPI(t)
	unlimited := map[string]bool{"GET /healthz": true, "GET /readyz": true} // probes; operator endpoints by their security
	for key, op := range doc.ops() {
		schemes := map[string]bool{}
		for _, req := range op.Security {
			for name := range req {
				schemes[name] = true
			}
		}
		want := []string{"400", "500"}
		if !unlimited[key] && !schemes["metricsToken"] {
			want = append(want, "429")
		}
		if schemes["bearerJWT"] || schemes["bearerAPIKey"] {
			want = append(want, "401", "403")
		}
		if schemes["bearerJWT"] {
			want = append(want, "404")
			if !slices.ContainsFunc(op.Parameters, func(p map[string]any) bool { return p["$ref"] == "#/components/parameters/TeamId" }) {
				t.Errorf("%s accepts a JWT but does not declare the X-Team-Id parameter (#/components/parameters/TeamId)", key)
			}
		}
		if strings.Contains(key, "{") {
			want = append(want, "404")
		}
		for _, code := range want {
			if _, ok := op.Responses[code]; !ok {
				t.Errorf("%s: no %s response", key, code)
			}
		}
		for code := range op.Responses {
			if n, err := strconv.Atoi(code); err != nil || n < 100 || n > 599 {
				t.Errorf("%s: response %q is not a status code", key, code)
			}
		}
	}
	// The operator endpoints and the probes are the routes outside /api/.
	for key := range doc.ops() {
		_, path, _ := strings.Cut(key, " ")
		if !strings.HasPrefix(path, "/api/") && !unlimited[key] && len(doc.ops()[key].Security) == 0 {
			t.Errorf("%s is outside /api/: is it a probe (no 429) or an operator endpoint (metricsToken)?", key)
		}
	}
}
