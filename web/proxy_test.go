package web

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRealClientIP(t *testing.T) {
	trusted, err := ParseTrustedProxies("10.0.0.0/8, 127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, peer, xff, want string
	}{
		{"untrusted peer keeps its address", "203.0.113.5:4000", "198.51.100.1", "203.0.113.5"},
		{"trusted peer, one hop", "127.0.0.1:4000", "198.51.100.1", "198.51.100.1"},
		{"trusted chain", "127.0.0.1:4000", "198.51.100.1, 10.1.2.3", "198.51.100.1"},
		{"forged left part ignored", "127.0.0.1:4000", "1.2.3.4, 198.51.100.1", "198.51.100.1"},
		{"several headers", "10.0.0.7:4000", "1.2.3.4|198.51.100.1", "198.51.100.1"},
		{"no header", "127.0.0.1:4000", "", "127.0.0.1"},
		{"garbage keeps the last good one", "127.0.0.1:4000", "nonsense, 10.9.9.9", "10.9.9.9"},
		{"IPv4-mapped peer", "[::ffff:127.0.0.1]:4000", "198.51.100.1", "198.51.100.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			h := realClientIP(trusted, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = clientIP(r) }))
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.peer
			for _, v := range splitBar(tt.xff) {
				r.Header.Add("X-Forwarded-For", v)
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			if got != tt.want {
				t.Fatalf("client %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := ParseTrustedProxies("10.0.0.0/8, not-an-ip"); err == nil {
		t.Fatal("a bad entry was accepted")
	}
}

func splitBar(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '|' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
