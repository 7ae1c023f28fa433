package dashboard

import "testing"

// TestSafeNext: a post-login redirect stays on this site. Browsers drop
// tabs and newlines from a Location and read "\" as "/", so every value
// below that could end up as "//host" once a browser has cleaned it falls
// back to the dashboard's home, as does anything that is not a plain path.
func TestSafeNext(t *testing.T) {
	const home = "/app/"
	for _, tc := range []struct {
		next, want string
	}{
		// Local paths are kept as they are.
		{"/app/templates", "/app/templates"},
		{"/ok/path?x=1", "/ok/path?x=1"},
		{"/app/templates?q=two%20words&page=2", "/app/templates?q=two%20words&page=2"},
		{"/invitations/inv_1/accept", "/invitations/inv_1/accept"},
		{"/app/", "/app/"},
		{"/", "/"},

		// Another host, however it is spelled.
		{"//evil", home},
		{"//evil.example/x", home},
		{"/\\evil", home},
		{"/\\/evil", home},
		{"\\\\evil", home},
		{"https://evil", home},
		{"http:evil", home},
		{"https:/evil", home},
		{"javascript:alert(1)", home},
		{"JavaScript:alert(1)", home},
		{"data:text/html,x", home},
		{"evil.example", home},
		{"%2F%2Fevil", home},
		{"%2F%09%2Fevil.example", home},

		// Characters a browser strips or rewrites, raw or percent-encoded.
		{"\t", home},
		{"/\t/evil", home},
		{"/\t/evil.example", home},
		{"/\n/evil", home},
		{"/\r\n/evil", home},
		{"/ /evil", home},
		{"/%09/evil", home},
		{"/%0a/evil", home},
		{"/%0D%0A/evil", home},
		{"/%5Cevil", home},
		{"/%5C/evil", home},
		{"/%2F/evil", home},
		{"/%2f%2fevil", home},
		{"/app/%5Cx", home},
		{"/app\\..\\..\\evil", home},
		{"/app/x\x00", home},
		{"/app/x\x7f", home},
		{"/app/\u00a0", home},
		{"/app/\u2028", home},
		{"/app/\u202e", home},
		{"/app/%e2%80%ae", home},
		{"/app/x?a=%09", home},
		{"/app/x?a=%0a", home},
		{"/app/x#frag", home},
		{"/%zz", home},
		{"/app/\xff", home},

		// Empty, relative and the login page itself (a loop).
		{"", home},
		{"app/templates", home},
		{"./x", home},
		{"/app/login", home},
		{"/app/login?next=/app/keys", home},
	} {
		if got := safeNext(tc.next); got != tc.want {
			t.Errorf("safeNext(%q) = %q, want %q", tc.next, got, tc.want)
		}
	}
}
