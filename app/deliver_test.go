package app

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestClientRefusesPrivateAtConnectTime checks the dial guard: even a URL
// that passed the create-time check cannot connect to a non-public address,
// whether given as a literal or as a name that resolves to one (a DNS answer
// that changed after the check, for example).
func TestClientRefusesPrivateAtConnectTime(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c, err := NewWebhookClient(false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{
		srv.URL,                            // 127.0.0.1
		"https://localhost:" + port + "/x", // a name that resolves to loopback
		"https://[::1]:" + port + "/x",
		"https://[::ffff:127.0.0.1]:" + port + "/x",
		"https://10.0.0.1/x",
		"https://169.254.169.254/latest/meta-data",
		"https://192.168.1.1/x",
	} {
		_, err := c.Get(target)
		if err == nil || !strings.Contains(err.Error(), "not a public address") {
			t.Fatalf("connect to %s: %v", target, err)
		}
		if got := describeSendError(err, time.Second).Error(); got != "refused: the target resolves to a non-public address (allowed only with --webhook-allow-private)" {
			t.Fatalf("%s: recorded error %q", target, got)
		}
	}
	// The control: with private targets allowed, the same name is dialled
	// and fails only at TLS (the test server's certificate signs itself),
	// so the refusals above came from the guard.
	open, err := NewWebhookClient(true, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = open.Get("https://localhost:" + port + "/x")
	if err == nil || strings.Contains(err.Error(), "not a public address") || !strings.Contains(describeSendError(err, time.Second).Error(), "TLS") {
		t.Fatalf("allowed private dial: %v", err)
	}
	// A public address passes the guard (no connection is made here).
	if err := guardDial("tcp", "93.184.215.14:443", nil); err != nil {
		t.Fatal(err)
	}
}

func TestParseRetrySchedule(t *testing.T) {
	got, err := ParseRetrySchedule("0s,1m,5m,30m")
	if err != nil || !slices.Equal(got, DefaultRetrySchedule) {
		t.Fatalf("default = %v, %v", got, err)
	}
	if got, err := ParseRetrySchedule(" 0s , 1.5s "); err != nil || !slices.Equal(got, []time.Duration{0, 1500 * time.Millisecond}) {
		t.Fatalf("spaced = %v, %v", got, err)
	}
	for _, bad := range []string{"", "5s,1m", "1m", "0s,-1s", "0s,soon", "0s" + strings.Repeat(",1s", 20)} {
		if _, err := ParseRetrySchedule(bad); err == nil {
			t.Errorf("ParseRetrySchedule(%q) accepted", bad)
		}
	}
	if d := (&Deliverer{}).retries(); !slices.Equal(d, DefaultRetrySchedule) {
		t.Fatalf("a deliverer without Retries uses %v", d)
	}
}

// TestSendGate: at most perSub attempts in flight; at most rate attempts
// counted per window, an attempt counting from its start until a window
// after it ended; an attempt never sent stops counting at once.
func TestSendGate(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	g := newSendGate(2, 3, time.Second)
	admit := g.admitter()
	if ok, _ := admit("s", t0); !ok {
		t.Fatal("first")
	}
	if ok, _ := admit("s", t0); !ok {
		t.Fatal("second")
	}
	if ok, reopen := admit("s", t0); ok || !reopen.IsZero() {
		t.Fatalf("third in the same pass: %v %v (two in flight is the cap)", ok, reopen)
	}
	if ok, _ := admit("other", t0); !ok {
		t.Fatal("another subscription is not held up")
	}
	g.acquire("s")
	g.acquire("s")
	g.release("s", true, t0.Add(100*time.Millisecond))
	g.release("s", false, t0.Add(200*time.Millisecond)) // never sent: not counted
	g.acquire("s")
	g.release("s", true, t0.Add(300*time.Millisecond))
	g.acquire("s")
	// 2 ended within the window + 1 in flight = the rate of 3.
	if ok, reopen := g.admit("s", t0.Add(400*time.Millisecond), 0); ok || !reopen.Equal(t0.Add(1100*time.Millisecond)) {
		t.Fatalf("at the rate: %v, reopen %v", ok, reopen)
	}
	if ok, _ := g.admit("s", t0.Add(1100*time.Millisecond), 0); !ok {
		t.Fatal("the first ended attempt left the window")
	}
	g.release("s", true, t0.Add(1200*time.Millisecond))
	if ok, _ := g.admit("s", t0.Add(3*time.Second), 0); !ok || len(g.subs) != 0 {
		t.Fatalf("idle subscription kept: %v", g.subs)
	}
}

// TestPublicAddr checks the guard against the IANA special-purpose address
// registries of both families, including IPv6 forms that carry an IPv4
// address inside (mapped, compatible, translated, 6to4, NAT64, Teredo):
// those reach the IPv4 address they embed, so they may not be a way round
// the IPv4 rules.
func TestPublicAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		// The public internet, both families, and IPv4 as a resolver
		// returns it (IPv4-mapped).
		{"8.8.8.8", true}, {"1.1.1.1", true}, {"93.184.215.14", true}, {"::ffff:8.8.8.8", true},
		{"2606:4700::1111", true}, {"2606:4700:4700::1111", true}, {"2a00:1450:4001:80e::200e", true},
		{"192.0.1.1", true}, {"192.88.98.1", true}, {"198.17.255.255", true}, {"223.255.255.255", true},
		{"2001:200::1", true}, {"2003::1", true}, {"2620:fe::fe", true},

		// IPv4 special-purpose registry.
		{"0.0.0.0", false}, {"0.1.2.3", false}, {"10.0.0.1", false}, {"100.64.0.1", false}, {"100.127.255.254", false},
		{"127.0.0.1", false}, {"127.255.255.254", false}, {"169.254.169.254", false}, {"172.16.5.4", false}, {"172.31.255.1", false},
		{"192.0.0.8", false}, {"192.0.0.170", false}, {"192.0.2.1", false}, {"192.31.196.1", false}, {"192.52.193.1", false},
		{"192.88.99.1", false}, {"192.168.1.1", false}, {"192.175.48.1", false}, {"198.18.0.1", false}, {"198.19.255.1", false},
		{"198.51.100.7", false}, {"203.0.113.9", false}, {"224.0.0.1", false}, {"239.255.255.250", false},
		{"240.0.0.1", false}, {"255.255.255.255", false},

		// IPv6 special-purpose registry.
		{"::", false}, {"::1", false}, {"100::1", false}, {"2001::1", false}, {"2001:1::1", false}, {"2001:2::1", false},
		{"2001:3::1", false}, {"2001:4:112::1", false}, {"2001:10::1", false}, {"2001:20::1", false}, {"2001:1ff::1", false},
		{"2001:db8::1", false}, {"3fff::1", false}, {"3fff:fff::1", false}, {"5f00::1", false},
		{"fc00::1", false}, {"fd12::1", false}, {"fe80::1", false}, {"fe80::1%eth0", false}, {"febf::1", false},
		{"fec0::1", false}, {"feff::1", false}, {"ff02::1", false}, {"ff0e::1", false},

		// IPv4 inside IPv6: private ones refused...
		{"::ffff:127.0.0.1", false}, {"::ffff:10.0.0.1", false}, {"::ffff:169.254.169.254", false},
		{"::127.0.0.1", false}, {"::10.0.0.1", false}, // IPv4-compatible (deprecated)
		{"::ffff:0:127.0.0.1", false}, {"::ffff:0:10.0.0.1", false}, // IPv4-translated (SIIT)
		{"2002:7f00:1::", false}, {"2002:a00:1::1", false}, {"2002:a9fe:a9fe::", false}, // 6to4
		{"64:ff9b::127.0.0.1", false}, {"64:ff9b::a00:1", false}, // NAT64, well-known prefix
		{"64:ff9b:1::7f00:1", false}, {"64:ff9b:1:7f00:1::", false}, // NAT64, local-use prefix
		// Teredo: server 65.54.227.120, client 127.0.0.1 obfuscated (bits inverted).
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", false},
		{"2002:7f00:1::%eth0", false}, // a zone does not hide the prefix
		// ...and, being transition or translation forms, public ones too: a
		// receiver is reached at its own address, never through these.
		{"::8.8.8.8", false}, {"::ffff:0:8.8.8.8", false}, {"2002:808:808::", false},
		{"64:ff9b::8.8.8.8", false}, {"64:ff9b:1::808:808", false}, {"2001:0:4136:e378:8000:63bf:f7f7:f7f7", false},
	} {
		if got := publicAddr(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("publicAddr(%s) = %v, want %v", tc.addr, got, tc.want)
		}
		err := checkPublicHost(t.Context(), tc.addr)
		if (err == nil) != tc.want {
			t.Errorf("checkPublicHost(%s) = %v, want allowed %v", tc.addr, err, tc.want)
		}
		// The operator learns how to allow a private target on purpose.
		if err != nil && (!strings.Contains(err.Error(), "non-public") || !strings.Contains(err.Error(), "--webhook-allow-private")) {
			t.Errorf("checkPublicHost(%s): %q does not name --webhook-allow-private", tc.addr, err)
		}
		ap := netip.AddrPortFrom(netip.MustParseAddr(tc.addr), 443).String()
		if err := guardDial("tcp", ap, nil); (err == nil) != tc.want {
			t.Errorf("guardDial(%s) = %v, want allowed %v", ap, err, tc.want)
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
		if allow(l, false, "k", 100, 1e9, time.Unix(1700000000, 0)).Allowed {
			ok++
		}
	}
	if ok != 100 {
		t.Fatalf("admitted %d of 150 with limit 100", ok)
	}
}

// opensslAnswer was computed with: printf '1700000000.{}' | openssl dgst -sha256 -hmac secret
const opensslAnswer = "b8569b78799ff9e3cbff0fc2d63a33a2b57f3282abd07c37ae5e8e7d79a5f163"
