package app

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestClientRefusesPrivateAtConnectTime checks the dial guard: even a URL
// that passed the create-time check cannot connect to a non-public address
// (a DNS answer that changed after the check, for example).
func TestClientRefusesPrivateAtConnectTime(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	c, err := NewWebhookClient(false, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(srv.URL)
	if err == nil || !strings.Contains(err.Error(), "not a public address") {
		t.Fatalf("connect to %s: %v", srv.URL, err)
	}
}

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "1.1.1.1": true, "2606:4700:4700::1111": true,
		"127.0.0.1": false, "10.0.0.1": false, "172.16.5.4": false, "192.168.1.1": false, "169.254.169.254": false,
		"100.64.0.1": false, "0.0.0.0": false, "::1": false, "::": false, "fe80::1": false, "fd12::1": false,
		"::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "224.0.0.1": false, "198.18.0.1": false,
	} {
		if got := publicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}

func TestSignKnownAnswer(t *testing.T) {
	// printf '1700000000.{}' | openssl dgst -sha256 -hmac secret
	if got, want := Sign("secret", "1700000000", []byte("{}")), "v1="+opensslAnswer; got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
}

func TestMemoryLimiterAdmitsExactly(t *testing.T) {
	l := NewMemoryLimiter()
	ok := 0
	for i := 0; i < 150; i++ {
		if l.Allow("k", 100, 1e9, time.Unix(1700000000, 0)).Allowed {
			ok++
		}
	}
	if ok != 100 {
		t.Fatalf("admitted %d of 150 with limit 100", ok)
	}
}

// opensslAnswer was computed with: printf '1700000000.{}' | openssl dgst -sha256 -hmac secret
const opensslAnswer = "b8569b78799ff9e3cbff0fc2d63a33a2b57f3282abd07c37ae5e8e7d79a5f163"
