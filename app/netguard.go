package app

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// blockedPrefixes are networks a webhook may not reach unless private
// targets are allowed: loopback, private, link-local (cloud metadata),
// carrier-grade NAT, unique-local, multicast and reserved ranges.
var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
		"224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
		"::/128", "::1/128", "::ffff:0:0/96", "64:ff9b::/96", "100::/64", "2001:db8::/32", "fc00::/7", "fe80::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// publicAddr reports whether ip may be the target of a webhook.
func publicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsUnspecified() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsMulticast() {
		return false
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// checkPublicHost resolves host and refuses it when any address is not public.
func checkPublicHost(ctx context.Context, host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		if !publicAddr(ip) {
			return fmt.Errorf("url points to a non-public address (%s); webhooks may only target the public internet", ip)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("url host %q does not resolve", host)
	}
	for _, a := range addrs {
		if !publicAddr(a) {
			return fmt.Errorf("url host %q resolves to a non-public address (%s); webhooks may only target the public internet", host, a.Unmap())
		}
	}
	return nil
}

// guardDial is a net.Dialer Control function that refuses non-public
// addresses at connect time, after DNS, so a name that changes its answer
// (DNS rebinding) cannot reach inside.
func guardDial(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook target %q: %w", address, err)
	}
	if !publicAddr(ap.Addr()) {
		return fmt.Errorf("webhook target %s is not a public address", ap.Addr().Unmap())
	}
	return nil
}
