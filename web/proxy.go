package web

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParseTrustedProxies reads --trusted-proxies: a comma-separated list of
// addresses and CIDR ranges ("127.0.0.1,10.0.0.0/8").
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			a, err := netip.ParseAddr(part)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: not an address or CIDR range", part)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: not an address or CIDR range", part)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// realClientIP replaces the request's peer address with the client's when
// the peer is a trusted proxy: the right-most X-Forwarded-For entry that is
// not itself a trusted proxy (entries to its left are the client's word and
// can be forged). Rate limits, the login throttle, the loopback rule of
// /metrics and the logs then see the client, not the proxy. Untrusted peers'
// X-Forwarded-For is ignored.
func realClientIP(trusted []netip.Prefix, next http.Handler) http.Handler {
	if len(trusted) == 0 {
		return next
	}
	isTrusted := func(a netip.Addr) bool {
		a = a.Unmap()
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peer, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil || !isTrusted(peer.Addr()) {
			next.ServeHTTP(w, r)
			return
		}
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break // garbage: keep the last good address
			}
			r.RemoteAddr = net.JoinHostPort(a.Unmap().String(), "0")
			if !isTrusted(a) {
				break
			}
		}
		next.ServeHTTP(w, r)
	})
}
