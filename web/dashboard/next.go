package dashboard

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// safeNext keeps a post-login redirect on this site: next when it is a
// local path (localPath), else the dashboard's home. The login page itself
// is refused too, so a login never redirects to another login.
func safeNext(next string) string {
	if !localPath(next) || strings.HasPrefix(next, "/app/login") {
		return "/app/"
	}
	return next
}

// localPath reports whether s is a path on this host, with an optional
// query: one leading "/" and nothing a browser could read as a scheme or a
// host. Checking the prefix is not enough: browsers drop tabs and newlines
// anywhere in a URL and read "\" as "/", so "/\t/evil.example" and
// "/\evil.example" both become "//evil.example", another site. Such
// characters are refused anywhere, raw or percent-encoded (the decoded
// form is what a careless layer further on would see), as are fragments,
// which no page of ours needs to carry through a login.
func localPath(s string) bool {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/\\") || !plainURLText(s, false) || strings.Contains(s, "#") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Opaque != "" || u.User != nil || u.Host != "" || u.Fragment != "" {
		return false
	}
	// u.Path is percent-decoded: "/%2F/x" and "/%5Cx" are refused here.
	if !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") || !plainURLText(u.Path, false) {
		return false
	}
	query, err := url.QueryUnescape(u.RawQuery)
	return err == nil && plainURLText(query, true)
}

// plainURLText reports whether s is valid UTF-8 without control or format
// characters (tabs, newlines, NUL, bidi overrides), backslashes or white
// space. A decoded query may hold spaces: a search for two words travels as
// "q=two%20words", and a query cannot change the host.
func plainURLText(s string, query bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		switch {
		case r == ' ' && query:
		case r == '\\' && !query:
			return false
		case r < 0x20, r == 0x7f, unicode.IsSpace(r), unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			return false
		}
	}
	return true
}
